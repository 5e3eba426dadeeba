"""oneflow.framework.args_tree.ArgsTree: a nest of lists / tuples / dicts whose leaves are walked
or mapped, as upstream's (global_view.to_global / to_local map a state dict's tensors with it).
Only containers of exactly these types are descended into (a namedtuple or a dict subclass other
than OrderedDict is a leaf), as upstream."""
from collections import OrderedDict

from .._tensor import Tensor

_SEQUENCES = (list, tuple)
_MAPPINGS = (dict, OrderedDict)


def _children(value):
    if type(value) in _SEQUENCES:
        return value
    if type(value) in _MAPPINGS:
        return value.values()
    return None


class ArgsTree:
    def __init__(self, io_args, gen_name=False, root_prefix="", root_name=None, tensor_type=Tensor):
        if gen_name:
            raise NotImplementedError("ArgsTree: gen_name=True (named nodes of nn.Graph's IO) is not provided")
        self._io_args = io_args
        self._tensor_type = tensor_type

    def gen_name(self):
        return False

    def iter_nodes(self):
        """Every node, containers included, depth first (a container before its items)."""
        stack = [iter([self._io_args])]
        while stack:
            try:
                node = next(stack[-1])
            except StopIteration:
                stack.pop()
                continue
            kids = _children(node)
            if kids:
                stack.append(iter(kids))
            yield node

    def map_leaf(self, map_function):
        """The same nest with each leaf (non-container) replaced by map_function(leaf)."""
        if map_function is None:
            raise ValueError("ArgsTree.map_leaf: map function cannot be None")
        return self._map(self._io_args, map_function)

    def map_tuple_leaf(self, map_function):
        if not isinstance(self._io_args, _SEQUENCES):
            raise TypeError("ArgsTree.map_tuple_leaf: only used when io args is a tuple or list")
        return self.map_leaf(map_function)

    def _map(self, value, fn):
        if type(value) in _SEQUENCES:
            return type(value)(self._map(v, fn) for v in value)
        if type(value) in _MAPPINGS:
            return type(value)((k, self._map(v, fn)) for k, v in value.items())
        return fn(value)

    def __repr__(self):
        return f"ArgsTree({self._io_args!r})"
