"""Boolean switches read from environment variables, as upstream OneFlow's `support.env_var_util`
(its test utilities import it to read ONEFLOW_* flags)."""
import os

_TRUE = ("1", "true", "yes", "on", "y")


def string_to_bool(env_str):
    """True for the spellings upstream counts as "on" (case-insensitive); anything else is False."""
    return env_str.lower() in _TRUE


def parse_boolean_from_env(env_var, defalut_value):
    """The variable's boolean value, or the default when it is unset. The misspelt parameter name is
    upstream's, kept so keyword callers work."""
    if not isinstance(env_var, str):
        raise TypeError(f"parse_boolean_from_env: env_var must be a str, got {type(env_var).__name__}")
    if not isinstance(defalut_value, bool):
        raise TypeError(
            f"parse_boolean_from_env: the default must be a bool, got {type(defalut_value).__name__}")
    value = os.getenv(env_var)
    return defalut_value if value is None else string_to_bool(value)
