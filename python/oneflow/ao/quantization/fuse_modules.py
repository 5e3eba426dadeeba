"""fuse_modules / fuse_modules_qat (PyTorch's): replace a run of submodules, named by their
qualified names, by one fused module (the first name) and Identity (the others).

fuse_modules (eval, for convert / inference): conv + bn -> the conv with bn folded in;
conv + bn + relu -> ConvReLU*d of the folded conv; conv + relu -> ConvReLU*d; linear + relu ->
LinearReLU; linear + bn1d -> the linear with bn folded in.
fuse_modules_qat (training): conv + bn -> ConvBn*d, conv + bn + relu -> ConvBnReLU*d (prepare_qat
turns them into the QAT modules that train with bn folded), conv + relu, linear + relu as above.
"""
import copy

from ...nn.modules.activation import ReLU
from ...nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ...nn.modules.conv import Conv1d, Conv2d, Conv3d
from ...nn.modules.linear import Identity, Linear
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from ..nn.intrinsic import modules as nni

_CONV = {Conv1d: 1, Conv2d: 2, Conv3d: 3}
_BN = {1: BatchNorm1d, 2: BatchNorm2d, 3: BatchNorm3d}


def _fuse_known(mods, is_qat):
    types = tuple(type(m) for m in mods)
    first = types[0]
    if first in _CONV:
        k = _CONV[first]
        if types == (first, ReLU):
            return getattr(nni, f"ConvReLU{k}d")(*mods)
        if types[1:] in ((_BN[k],), (_BN[k], ReLU)):
            conv, bn = mods[0], mods[1]
            if conv.training != bn.training:
                raise RuntimeError("fuse_modules: the conv and the batch norm must both be in training or eval mode")
            relu = len(mods) == 3
            if is_qat:
                return getattr(nni, f"ConvBn{'ReLU' if relu else ''}{k}d")(*mods)
            if conv.training:
                raise RuntimeError("fuse_modules: conv + bn fusion folds the running statistics: call model.eval() "
                                   "first, or use fuse_modules_qat for training")
            fused = fuse_conv_bn_eval(conv, bn)
            return getattr(nni, f"ConvReLU{k}d")(fused, mods[2]) if relu else fused
    if first is Linear:
        if types == (Linear, ReLU):
            return nni.LinearReLU(*mods)
        if types == (Linear, BatchNorm1d) and not is_qat:
            if mods[0].training or mods[1].training:
                raise RuntimeError("fuse_modules: linear + bn fusion needs eval mode (call model.eval() first)")
            return fuse_linear_bn_eval(*mods)
    raise NotImplementedError(f"fuse_modules: cannot fuse {[t.__name__ for t in types]} (supported: conv + bn, "
                              f"conv + bn + relu, conv + relu, linear + relu, linear + bn1d in eval)")


def _get(model, name):
    mod = model
    for part in name.split("."):
        if not hasattr(mod, part):
            raise AttributeError(f"fuse_modules: the model has no submodule {name!r}")
        mod = getattr(mod, part)
    return mod


def _set(model, name, new):
    parent, _, last = name.rpartition(".")
    setattr(_get(model, parent) if parent else model, last, new)


def _fuse(model, modules_to_fuse, inplace, is_qat):
    if not inplace:
        model = copy.deepcopy(model)
    groups = modules_to_fuse if modules_to_fuse and isinstance(modules_to_fuse[0], (list, tuple)) \
        else [modules_to_fuse]
    for names in groups:
        mods = [_get(model, n) for n in names]
        fused = _fuse_known(mods, is_qat)
        _set(model, names[0], fused)
        for n in names[1:]:
            _set(model, n, Identity())
    return model


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=None, fuse_custom_config_dict=None):
    if fuser_func is not None:
        raise NotImplementedError("fuse_modules: custom fuser_func is not supported")
    return _fuse(model, modules_to_fuse, inplace, is_qat=False)


def fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=None, fuse_custom_config_dict=None):
    if fuser_func is not None:
        raise NotImplementedError("fuse_modules_qat: custom fuser_func is not supported")
    return _fuse(model, modules_to_fuse, inplace, is_qat=True)


__all__ = ["fuse_modules", "fuse_modules_qat"]
