"""Eager-mode QAT flow of PyTorch's torch.ao.quantization on oneflow modules:

    model.qconfig = get_default_qat_qconfig("x86")
    qat_model = prepare_qat(model.train())      # swap modules, insert fake-quantizers
    ... train qat_model ...
    quantized = convert(qat_model.eval())       # freeze the learned qparams

prepare_qat: propagate_qconfig_ gives every submodule its parent's qconfig (a module's own
`qconfig` attribute wins); Conv2d/3d and Linear with a qconfig become their oneflow.ao.nn.qat
versions (weight fake-quantized, parameters shared; Conv1d stays float as in PyTorch); QuantStub,
every QAT module and the float Conv1d get an `activation_post_process = qconfig.activation()`
applied to their output by a forward hook.
So do the leaf modules PyTorch quantizes without weights (BatchNorm2d/3d, ELU, Hardswish,
LeakyReLU, ReLU6, LayerNorm, GroupNorm, InstanceNorm*d). DeQuantStub and other modules get none
(as in PyTorch's eager mode, where for example a ReLU runs on the quantized values of the module
before it).
convert: QuantStub -> Quantize, QAT Conv / Linear -> oneflow.ao.nn.quantized (run in float on
the quantization grid, see that module), DeQuantStub -> DeQuantize; qconfigs and observers removed.
"""
import copy

from ...nn.modules import conv as _float_convs
from ...nn.modules.conv import Conv1d, Conv2d, Conv3d
from ...nn.modules.linear import Linear
from ..nn import qat as nnqat
from ..nn.intrinsic import modules as nni
from ..nn.intrinsic import qat as nniqat
from ..nn import quantized as nnq
from .stubs import DeQuantStub, QuantStub


def get_default_qat_module_mappings():
    # as PyTorch's: Conv1d and ConvReLU1d are not swapped for QAT modules (they stay float, their
    # output is observed, and convert quantizes their weight once)
    mapping = {Conv2d: nnqat.Conv2d, Conv3d: nnqat.Conv3d, Linear: nnqat.Linear,
               nni.ConvReLU2d: nniqat.ConvReLU2d, nni.ConvReLU3d: nniqat.ConvReLU3d, nni.LinearReLU: nniqat.LinearReLU}
    for k in (1, 2, 3):
        for name in (f"ConvBn{k}d", f"ConvBnReLU{k}d"):
            mapping[getattr(nni, name)] = getattr(nniqat, name)
    return mapping


def _float_op_types():
    """Leaf modules PyTorch observes and converts without a weight to quantize."""
    from ... import nn
    return (nn.BatchNorm2d, nn.BatchNorm3d, nn.ELU, nn.Hardswish, nn.LeakyReLU, nn.ReLU6, nn.LayerNorm, nn.GroupNorm,
            nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def get_default_static_quant_module_mappings():
    mapping = {QuantStub: nnq.Quantize, DeQuantStub: nnq.DeQuantize, Linear: nnq.Linear, nnqat.Linear: nnq.Linear,
               nni.LinearReLU: nnq.LinearReLU, nniqat.LinearReLU: nnq.LinearReLU}
    mapping.update({t: nnq.FloatOp for t in _float_op_types()})
    from ... import nn
    mapping[nn.ReLU6] = nnq.ReLU6
    for k in (1, 2, 3):
        conv, conv_relu = getattr(nnq, f"Conv{k}d"), getattr(nnq, f"ConvReLU{k}d")
        mapping.update({getattr(nn_conv, f"Conv{k}d"): conv for nn_conv in (_float_convs, nnqat)})
        mapping[getattr(nni, f"ConvReLU{k}d")] = conv_relu
        mapping[getattr(nniqat, f"ConvBn{k}d")] = conv
        mapping[getattr(nniqat, f"ConvBnReLU{k}d")] = conv_relu
        if k > 1:
            mapping[getattr(nniqat, f"ConvReLU{k}d")] = conv_relu
    return mapping


def get_default_qconfig_propagation_list():
    """Leaf module types whose output gets an activation fake-quantizer in prepare."""
    return set(get_default_static_quant_module_mappings()) | set(get_default_qat_module_mappings())


def propagate_qconfig_(module, qconfig_dict=None):
    """Sets `qconfig` on every submodule: its own, else qconfig_dict[type] / [qualified name], else
    its parent's."""
    qconfig_dict = qconfig_dict or {}

    def visit(mod, parent_qconfig, prefix):
        qconfig = qconfig_dict.get(type(mod), parent_qconfig)
        qconfig = qconfig_dict.get(prefix, qconfig)
        qconfig = getattr(mod, "qconfig", qconfig)
        mod.qconfig = qconfig
        for name, child in mod.named_children():
            visit(child, qconfig, prefix + "." + name if prefix else name)

    visit(module, None, "")


def _observer_forward_hook(module, input, output):  # noqa: A002
    return module.activation_post_process(output)


def _insert_observer(mod):
    if getattr(mod, "qconfig", None) is None or isinstance(mod, DeQuantStub):
        return
    if mod.qconfig.activation is None:
        return
    post = mod.qconfig.activation()
    device = next((p.device for p in list(mod.parameters()) + list(mod.buffers())), None)
    mod.add_module("activation_post_process", post if device is None else post.to(device))
    mod.register_forward_hook(_observer_forward_hook)


def _add_observer_(module, observed_types, leaf_types):
    for child in module.children():
        if type(child) in observed_types or isinstance(child, (QuantStub, nni._FusedModule)):
            _insert_observer(child)
        elif not list(child.children()) and type(child) in leaf_types:
            _insert_observer(child)
        else:
            _add_observer_(child, observed_types, leaf_types)


def prepare(model, inplace=False, observer_non_leaf_module_list=None):
    """Inserts activation fake-quantizers (qconfig.activation) after QuantStubs, the modules of
    observer_non_leaf_module_list and leaf modules of get_default_qconfig_propagation_list()."""
    if not inplace:
        model = copy.deepcopy(model)
    if not any(getattr(m, "qconfig", None) is not None for m in model.modules()):
        import warnings
        warnings.warn("prepare: none of the submodules has a qconfig; set model.qconfig first (nothing is "
                      "quantized)", stacklevel=2)
    _add_observer_(model, set(observer_non_leaf_module_list or ()), get_default_qconfig_propagation_list())
    return model


def prepare_qat(model, mapping=None, inplace=False):
    """The QAT model of `model` (in training mode, with model.qconfig or submodule qconfigs set)."""
    if not model.training:
        raise RuntimeError("prepare_qat only works on models in training mode (call model.train() first)")
    mapping = get_default_qat_module_mappings() if mapping is None else mapping
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model)
    _convert(model, mapping)
    prepare(model, inplace=True, observer_non_leaf_module_list=set(mapping.values()))
    return model


def swap_module(mod, mapping):
    if getattr(mod, "qconfig", None) is None or type(mod) not in mapping:
        return mod
    new = mapping[type(mod)].from_float(mod)
    # keep the user's hooks, not the observer hook (the converted module quantizes its own output)
    for key, hook in mod._forward_pre_hooks.items():
        new.register_forward_pre_hook(hook)
    for key, hook in mod._forward_hooks.items():
        if hook is not _observer_forward_hook:
            new.register_forward_hook(hook)
    return new


def _convert(module, mapping):
    for name, child in list(module.named_children()):
        if type(child) in mapping:
            setattr(module, name, swap_module(child, mapping))
        else:
            _convert(child, mapping)


def _remove_qconfig(module):
    for mod in module.modules():
        if "qconfig" in mod.__dict__:
            del mod.qconfig
        if "activation_post_process" in mod._modules:
            del mod._modules["activation_post_process"]
            for key in [k for k, h in mod._forward_hooks.items() if h is _observer_forward_hook]:
                del mod._forward_hooks[key]


def convert(module, mapping=None, inplace=False, remove_qconfig=True):
    """The converted model: quantization stubs and QAT modules replaced by their quantized versions
    with the qparams learned in training (oneflow.ao.nn.quantized, run in float)."""
    mapping = get_default_static_quant_module_mappings() if mapping is None else mapping
    if not inplace:
        module = copy.deepcopy(module)
    _convert(module, mapping)
    if remove_qconfig:
        _remove_qconfig(module)
    return module


__all__ = ["prepare", "prepare_qat", "convert", "propagate_qconfig_", "swap_module",
           "get_default_qat_module_mappings", "get_default_static_quant_module_mappings",
           "get_default_qconfig_propagation_list"]

