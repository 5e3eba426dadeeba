"""oneflow.mock_torch: run unmodified PyTorch code on oneflow.

    import oneflow.mock_torch as mock
    mock.enable()               # or: with mock.enable(): ...
    import torch                # oneflow
    import torch.nn.functional as F   # oneflow.nn.functional
    mock.disable()              # the real torch again

or `python -m oneflow.mock_torch script.py args...`. A meta-path finder placed first on
sys.meta_path resolves `torch` and every `torch.X` to `oneflow` / `oneflow.X` (the same module
objects, so oneflow's own imports are unaffected); enable() sets aside the torch modules already
imported and disable() puts them back. `lazy=True` (OneFlow's option) makes names oneflow lacks
resolve to placeholders that raise only when used, so scripts importing rarely used APIs can
still run the parts oneflow supports; `extra_dict` maps further packages
({"torchvision": "flowvision"}).
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types

__all__ = ["enable", "disable", "is_enabled"]

_state = {"finder": None, "saved": {}, "lazy": False}


def _aliases(extra_dict):
    aliases = {"torch": "oneflow"}
    aliases.update(extra_dict or {})
    return aliases


def _target(fullname, aliases):
    for src, dst in aliases.items():
        if fullname == src or fullname.startswith(src + "."):
            return dst + fullname[len(src) :]
    return None


class _Missing:
    """lazy=True: what a name oneflow lacks resolves to; raises when used."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Missing(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"mock_torch: {self._name} is not available in oneflow")

    def __repr__(self):
        return f"<mock_torch placeholder for {self._name}>"


class _LazyModule(types.ModuleType):
    """lazy=True: a view of a oneflow module whose missing attributes are placeholders."""

    def __init__(self, name, module):
        super().__init__(name)
        self.__dict__["_module"] = module

    def __getattr__(self, attr):
        module = self.__dict__["_module"]
        try:
            return getattr(module, attr)
        except AttributeError:
            if attr.startswith("__"):
                raise
            return _Missing(f"{self.__name__}.{attr}")


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, aliases, lazy):
        self.aliases, self.lazy = aliases, lazy

    def find_spec(self, fullname, path=None, target=None):
        dst = _target(fullname, self.aliases)
        if dst is None:
            return None
        try:
            found = importlib.util.find_spec(dst)
        except ModuleNotFoundError:
            found = None
        if found is None:
            if self.lazy:
                return importlib.util.spec_from_loader(fullname, self)
            raise ModuleNotFoundError(
                f"No module named '{fullname}' (mock_torch maps it to "
                f"'{dst}', which does not exist)",
                name=fullname,
            )
        return importlib.util.spec_from_loader(
            fullname, self, is_package=found.submodule_search_locations is not None
        )

    def create_module(self, spec):
        dst = _target(spec.name, self.aliases)
        try:
            module = importlib.import_module(dst)
        except ModuleNotFoundError:
            if not self.lazy:
                raise
            return _LazyModule(spec.name, _Missing(dst))
        return _LazyModule(spec.name, module) if self.lazy else module

    def exec_module(self, module):
        pass  # the target module is already executed


class _Switch:
    """The value of enable()/disable(): usable as a context manager that undoes the switch."""

    def __init__(self, undo):
        self._undo = undo

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._undo()
        return False


def enable(lazy=False, verbose=False, extra_dict=None):
    """Makes `import torch` (and torch.X) give oneflow until disable()."""
    was = _state["finder"] is not None
    if was:
        disable()
    finder = _AliasFinder(_aliases(extra_dict), bool(lazy))
    # Set aside the real modules (torch, torch.X, extra_dict's) imported so far.
    saved = {n: m for n, m in sys.modules.items() if _target(n, finder.aliases) is not None}
    for n in saved:
        del sys.modules[n]
    _state.update(finder=finder, saved=saved, lazy=bool(lazy))
    sys.meta_path.insert(0, finder)
    if verbose:
        print(f"mock_torch: {', '.join(f'{k} -> {v}' for k, v in finder.aliases.items())}")
    return _Switch(disable if not was else lambda: None)


def disable():
    """Restores the real torch (and the torch modules imported before enable())."""
    finder = _state["finder"]
    if finder is None:
        return _Switch(lambda: None)
    aliases, lazy = finder.aliases, _state["lazy"]
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for n in [n for n in sys.modules if _target(n, aliases) is not None]:
        del sys.modules[n]
    sys.modules.update(_state["saved"])
    _state.update(finder=None, saved={})

    def again():
        enable(lazy=lazy, extra_dict={k: v for k, v in aliases.items() if k != "torch"})

    return _Switch(again)


def is_enabled():
    return _state["finder"] is not None
