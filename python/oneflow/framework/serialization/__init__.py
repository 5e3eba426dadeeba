"""flow.save / flow.load (docs/checkpoint_format.md), by subject: _save (our format's writer and its
constants), _load (flow.load: our format, dispatching torch.save's and upstream OneFlow's files),
_torch_format and _oneflow_format (those two formats), _restricted_pickle (the unpickler that
rebuilds only known globals). The modules are private so that `save` / `load` here are the
functions (as upstream's oneflow.framework.check_point_v2 and torch.serialization)."""
from ._save import save  # noqa: F401
from ._load import load  # noqa: F401
