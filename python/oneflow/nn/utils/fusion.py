"""Folding a batch norm into the convolution or linear layer before it, for inference (as
torch.nn.utils.fusion): w' = w * gamma / sqrt(var + eps) per output channel,
b' = (b - mean) * gamma / sqrt(var + eps) + beta."""
import copy

from ... import _oneflow_internal as _C
from ..parameter import Parameter


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """(fused weight, fused bias) as Parameters; transpose: a transposed convolution's weight
    (its output channels on dim 1)."""
    dtype = conv_w.dtype
    if conv_b is None:
        conv_b = _C.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _C.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _C.zeros_like(bn_rm)
    bn_var_rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = [1] * conv_w.dim()
    shape[1 if transpose else 0] = -1
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(conv_b.dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of the eval-mode conv with bn folded into its weight and bias."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """(fused weight, fused bias) of a linear layer followed by a 1-d batch norm."""
    if linear_b is None:
        linear_b = _C.zeros_like(bn_rm)
    bn_scale = bn_w * (bn_rv + bn_eps).rsqrt()
    fused_w = linear_w * bn_scale.unsqueeze(-1)
    fused_b = (linear_b - bn_rm) * bn_scale + bn_b
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of the eval-mode linear layer with bn folded in."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused
