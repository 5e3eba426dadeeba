"""``flow.checkpoint`` of OneFlow 0.x (its "model I/O v2"): ``get(path)`` reads a snapshot as
``{name: tensor}`` (to hand to ``flow.load_variables``), ``save(path, var_dict=None)`` writes the
given variables (default: every variable) as one. Same snapshot format as
``flow.train.CheckPoint`` (framework/serialization/_snapshot_format.py)."""
import os


def get(path):
    """{variable name: tensor} of the snapshot at `path`, or the one variable's tensor when `path`
    is a variable's directory (its ``out`` and ``meta``)."""
    from ..framework.serialization import _snapshot_format as snapshot
    if not os.path.isdir(path):
        raise FileNotFoundError(f"checkpoint.get: directory {path} doesn't exist")
    out = snapshot.read(path)
    if isinstance(out, dict) and not out:
        raise RuntimeError(f"checkpoint.get: {path} holds no variables (no <name>/out files)")
    return out


def save(path, var_dict=None):
    """Writes var_dict ({name: tensor}, default every variable of the session) as a snapshot at
    `path` (built beside it and moved in place complete)."""
    from ..framework.serialization import _snapshot_format as snapshot
    from . import pending
    from .variables import get_all_variables
    pending.sync()  # the values the queued job runs leave
    if var_dict is None:
        var_dict = get_all_variables()
    if not isinstance(var_dict, dict):
        raise TypeError(f"checkpoint.save: var_dict must be a dict of name -> tensor, got {type(var_dict).__name__}")
    snapshot.write(path, {k: v for k, v in var_dict.items()})
