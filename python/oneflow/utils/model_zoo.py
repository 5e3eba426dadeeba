"""oneflow.utils.model_zoo: `load_url` (hub.load_state_dict_from_url) and `tqdm`, the names
model-zoo code imports from here."""
from ..hub import load_state_dict_from_url as load_url  # noqa: F401

__all__ = ["load_url", "tqdm"]


def __getattr__(name):
    if name == "tqdm":  # imported on first use, as in oneflow.hub
        from ..hub import _tqdm
        return _tqdm()
    raise AttributeError(f"module 'oneflow.utils.model_zoo' has no attribute '{name}'")
