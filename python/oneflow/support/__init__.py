"""`oneflow.support`: upstream OneFlow's internal helper package, present here only for the modules
that code outside the framework imports (upstream's test utilities read `env_var_util`)."""
