"""``oneflow.core.job``: initializer_conf_pb2 (0.x's InitializerConf message)."""
