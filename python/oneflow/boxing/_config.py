"""The recorded values of oneflow.boxing's switches (see oneflow/boxing/__init__.py)."""
_values = {}


def config():
    """A copy of every switch set so far: name -> value."""
    return dict(_values)


def _set_bool(name, val):
    if not isinstance(val, bool):
        raise TypeError(f"oneflow.boxing: {name} takes a bool, got {type(val).__name__}")
    _values[name] = val


def _set_int(name, val, minimum=0):
    if isinstance(val, bool) or not isinstance(val, int):
        raise TypeError(f"oneflow.boxing: {name} takes an int, got {type(val).__name__}")
    if val < minimum:
        raise ValueError(f"oneflow.boxing: {name} must be >= {minimum}, got {val}")
    _values[name] = val
