"""oneflow.framework: the modules of upstream OneFlow's internal tree that libraries import by
path (flowvision: `from oneflow.framework.tensor import Tensor`, `flow.framework.dtype`; LiBai and
global_view: `framework.args_tree.ArgsTree`; OneFlow's own tests: `framework.unittest`). Each is a
thin module over this package's own objects, not a copy of upstream's plumbing. `serialization/`
is flow.save / flow.load (upstream's framework/check_point_v2.py holds them too)."""
from . import args_tree, dtype, tensor, tensor_tuple_util, unittest  # noqa: F401
from . import serialization  # noqa: F401  (flow.save / flow.load)
