"""Global tensors (docs/global_tensors.md): a logical tensor laid out over the ranks of a placement
by an SBP, each process holding its local component.

Note [A global tensor is a Tensor]: GlobalTensor subclasses ``flow.Tensor`` (``isinstance(g,
flow.Tensor)`` holds, as in OneFlow) but its instances are never constructed as C++ tensors: they
hold no storage of their own, only the local component. The bindings therefore do not take one
for a tensor (IsTensor in src/api/convert.cpp); table ops given one reach the dispatcher
(dispatch.py) through them (Note [Global arguments] in src/api/convert.h). Every attribute of
``flow.Tensor`` is defined again on GlobalTensor (``routes.install_routes``, run once the package has
added its Python methods to ``flow.Tensor``): its own, or a route to the dispatcher -- so no
method of the base ever runs on a global tensor."""
import numpy as np

from .. import _oneflow_internal as _C
from ..sbp import sbp as _SbpType
from .boxing import box_between, box_nd
from .placement import placement as _Placement
from .runtime import levels, position, split_sizes, world


def _as_sbp_tuple(sbp, what, placement=None):
    """sbp as a tuple, one per mesh axis of `placement` (when given: the lengths must agree)."""
    if isinstance(sbp, _SbpType):
        sbp = (sbp,)
    if not isinstance(sbp, (list, tuple)) or not sbp or not all(isinstance(s, _SbpType) for s in sbp):
        raise TypeError(f"{what}: sbp must be a oneflow.sbp value or a tuple of them, got {sbp!r}")
    if placement is not None and len(sbp) != len(placement._hierarchy):
        raise ValueError(f"{what}: {len(sbp)} sbp for a placement of hierarchy {placement._hierarchy} "
                         f"(one per mesh axis)")
    return tuple(sbp)


def all_broadcast(placement):
    from ..sbp import broadcast
    return (broadcast,) * len(placement._hierarchy)


def _grad_sbp(sbp):
    """Note [Gradients of global tensors]: a partial-sum tensor's gradient is broadcast."""
    from ..sbp import broadcast
    return tuple(broadcast if s._kind == "P" else s for s in sbp)


def is_global(x):
    """Whether x is a global tensor (a GlobalTensor or a GlobalParameter: _global/parameter.py)."""
    return getattr(type(x), "_global_tensor_", False)


class SplitRangeError(IndexError, RuntimeError):
    """A split dim past the tensor's dims: an IndexError (a dim out of range, as PyTorch's) and
    OneFlow's RuntimeError (upstream's to_global raises one: code catching either works)."""


def _check_split(shape, sbp, what):
    if sbp._kind == "S" and not 0 <= sbp._dim < max(len(shape), 1):
        raise SplitRangeError(f"{what}: {sbp!r} of a tensor with {len(shape)} dims (Split axis out of range "
                              f"(expected to be in range of [0, {len(shape)}), but got {sbp._dim}!)")
    if sbp._kind == "S" and len(shape) == 0:
        raise SplitRangeError(f"{what}: a 0-d tensor cannot be split")


class GlobalTensor(_C.Tensor):
    """The tensor a ``to_global`` call or a global op returns: ``placement``, ``sbp``, the logical
    ``shape``; ``to_local()`` is this process's component."""

    _oneflow_global_ = True  # (the bindings' marker: Note [Global arguments])
    _global_tensor_ = True  # (is_global: GlobalParameter has it too)
    __slots__ = ("_local", "_placement", "_sbp", "_shape", "__weakref__")
    # a global tensor hashes by identity, as a local one (its operators, __eq__ among them, are
    # routes.py's, set by install_routes, which leaves what the class defines itself)
    __hash__ = object.__hash__

    def __init__(self, local, placement, sbp, shape):
        self._local, self._placement, self._sbp = local, placement, sbp
        self._shape = tuple(int(d) for d in shape)

    # ---- metadata ----
    @property
    def placement(self):
        return self._placement

    @property
    def sbp(self):
        return self._sbp

    @property
    def shape(self):
        from .._size import Size
        return Size(self._shape)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self._shape[dim]

    def dim(self):
        return len(self._shape)

    ndim = property(dim)

    def numel(self):
        return int(np.prod(self._shape, dtype=np.int64))

    nelement = numel

    @property
    def dtype(self):
        return self._local.dtype

    @property
    def device(self):
        """This rank's component's device (library code that groups tensors by device, such as
        clip_grad_norm_, then works; the tensor's own layout is its placement)."""
        return self._local.device

    is_global = is_consistent = property(lambda self: True)
    is_local = property(lambda self: False)
    is_lazy = property(lambda self: False)

    @property
    def requires_grad(self):
        return self._local.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._local.requires_grad = value

    def requires_grad_(self, value=True):
        self._local.requires_grad_(value)
        return self

    @property
    def is_leaf(self):
        return self._local.is_leaf

    @property
    def grad_fn(self):
        return self._local.grad_fn

    @property
    def is_cuda(self):
        return self._placement.type == "cuda"

    @property
    def data(self):
        return GlobalTensor(self._local.data, self._placement, self._sbp, self._shape)

    @data.setter
    def data(self, value):
        """`t.data = v` with v global (Module.to / .double() / _apply on global parameters): the
        local component's data is swapped in place, so a parameter keeps its identity (and the
        leaf optimizers and autograd hold), and t takes v's placement, sbp and shape."""
        if not is_global(value):  # (a GlobalParameter too: LiBai's Module._apply re-places its parameters)
            raise TypeError("data: a global tensor's data must be set to a global tensor "
                            f"(got a local {type(value).__name__}; use to_global first)")
        self._local.data = value._local
        self._placement, self._sbp, self._shape = value._placement, value._sbp, value._shape

    @property
    def grad(self):
        g = self._local.grad
        if g is None:
            return None
        return GlobalTensor(g, self._placement, _grad_sbp(self._sbp), self._shape)

    @grad.setter
    def grad(self, value):
        self._local.grad = None if value is None else value.to_global(self._placement, self._sbp)._local

    # ---- autograd hooks: on the local component, seeing global gradients ----
    def register_hook(self, hook):
        """hook(grad) with the gradient as a global tensor (laid out as Note [Gradients of global
        tensors] has it); a tensor it returns replaces the gradient. A hooked leaf's gradient is
        complete when the hook runs: its sum over ranks is not deferred to the end of the pass."""
        if self._local.is_leaf:
            self._local._global_hooked = True  # (read by boxing.BroadcastUse)
        placement, sbp, shape = self._placement, _grad_sbp(self._sbp), self._shape

        def local_hook(grad):
            r = hook(GlobalTensor(grad, placement, sbp, shape))
            if r is None or not is_global(r):
                return r
            return r.to_global(placement=placement, sbp=sbp)._local
        return self._local.register_hook(local_hook)

    def register_post_accumulate_grad_hook(self, hook):
        """hook(tensor) once this leaf's .grad is accumulated (the global tensor: a weak reference
        is kept, as the local component holds the hook)."""
        import weakref
        me = weakref.ref(self)
        self._local._global_hooked = True

        def local_hook(_):
            g = me()
            if g is not None:
                hook(g)
        return self._local.register_post_accumulate_grad_hook(local_hook)

    def retain_grad(self):
        self._local.retain_grad()

    @property
    def retains_grad(self):
        return self._local.retains_grad

    @property
    def _version(self):
        return self._local._version

    # ---- conversions ----
    def to_local(self, *, copy=False):
        """This process's component; an empty tensor on a process outside the placement."""
        if position(self._placement) < 0:
            from .. import empty
            return empty((0,), dtype=self.dtype, device=self._placement.type)
        return self._local.clone() if copy else self._local

    def to_global(self, placement=None, sbp=None, *, grad_sbp=None, check_meta=True, copy=False):
        """Another layout of the same logical tensor (boxing: collectives over the ranks), or the
        same on another placement (through broadcast layouts on both: one transfer from the
        first rank of this one)."""
        if placement is not None and not isinstance(placement, _Placement):
            raise TypeError(f"to_global: placement must be a oneflow.placement, got {type(placement).__name__}")
        target = self._placement if placement is None else placement
        if sbp is None and len(target._hierarchy) != len(self._placement._hierarchy):
            raise ValueError("to_global: give the sbp of a placement with another hierarchy")
        dst = self._sbp if sbp is None else _as_sbp_tuple(sbp, "to_global", target)
        for d in dst:
            _check_split(self._shape, d, "to_global")
        if target != self._placement:  # only the blocks each target process lacks move
            local = box_between(self._local, self._sbp, self._placement, dst, target, self._shape)
            return GlobalTensor(local, target, dst, self._shape)
        if dst == self._sbp and not copy:
            return self
        local = box_nd(self._local, self._sbp, dst, self._shape, self._placement)
        if copy and local is self._local:
            local = local.clone()
        return GlobalTensor(local, self._placement, dst, self._shape)

    to_consistent = to_global

    def new(self, *args, **kwargs):
        """OneFlow's Tensor.new of a global tensor: the new tensor (empty of the given size, or of
        the given data) on this tensor's placement, laid out as its SBP -- a split past the new
        tensor's dims broadcast."""
        if args and is_global(args[0]):
            raise TypeError("new(): a global tensor's new() takes sizes or data, not another global tensor")
        full = self._local.new(*args, **kwargs)
        sbp = tuple(s if s._kind != "S" or s._dim < full.dim() else all_broadcast(self._placement)[0]
                    for s in self._sbp)
        return from_logical(full, self._placement, sbp, "new")

    def type_as(self, other):
        """OneFlow's: another global tensor's dtype, placement and SBP (boxed to them), or a local
        tensor's dtype and device (this process's component): flow.type_as, defined once."""
        from .._shape import type_as
        return type_as(self, other)

    def cpu(self):
        """OneFlow's Tensor.cpu() on a global tensor: the same ranks and layout on a CPU placement
        (itself when it is one already, as PyTorch's .cpu() of a CPU tensor)."""
        if self._placement.type == "cpu":
            return self
        return self.to_global(_Placement("cpu", self._placement.ranks.tolist()), self._sbp)

    def detach(self):
        return GlobalTensor(self._local.detach(), self._placement, self._sbp, self._shape)

    def clone(self):
        return GlobalTensor(self._local.clone(), self._placement, self._sbp, self._shape)

    def _full(self):
        """The logical tensor on this process (a broadcast copy; on a placement over some of the
        processes, sent to all of them: every process reads it, as it runs every op)."""
        from ..sbp import broadcast
        everyone = _Placement(self._placement.type, list(range(world()[1])))
        if everyone == self._placement:
            return self.to_global(sbp=broadcast)._local
        return self.to_global(placement=everyone, sbp=broadcast)._local

    def numpy(self):
        return self._full().detach().cpu().numpy()

    def item(self):
        return self._full().item()

    def tolist(self):
        return self._full().tolist()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Backward on the local components (Note [Gradients of global tensors]): a broadcast or
        partial-sum scalar loss seeds each rank's component with 1."""
        from ..autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def __repr__(self):
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
        return f"tensor({body}, placement={self._placement!r}, sbp={self._sbp!r}, dtype={self.dtype})"

    __str__ = __repr__

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __bool__(self):
        return bool(self.item())

    # ---- Python protocols ----
    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __reversed__(self):
        return self.flip(0) if self._shape else self

    def __contains__(self, value):
        return bool((self == value).any())

    def __deepcopy__(self, memo):
        if id(self) not in memo:  # (a global parameter stays one)
            memo[id(self)] = type(self)(self._local.__deepcopy__(memo), self._placement, self._sbp, self._shape)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        raise RuntimeError("pickling a global tensor: save it with flow.save(obj, path, global_dst_rank=r) (the "
                           "logical value) or pickle its to_local() component")

    def __dlpack__(self, *args, **kwargs):
        raise RuntimeError("__dlpack__: a global tensor has no single buffer; use to_local() (this process's "
                           "component) or numpy() (the logical value)")

    __dlpack_device__ = __dlpack__


def local_to_global(local, placement, sbp, what="to_global", check_meta=True):
    """A local tensor as this rank's component of a global one (OneFlow's Tensor.to_global on a
    local tensor): split -- the components are the slices, their sizes along the split dim give
    the logical size; broadcast -- the placement's (or the mesh axis group's) first rank's
    tensor, sent to the others (one logical value however the ranks' copies differed);
    partial_sum -- the addends. On a mesh each axis's SBP applies within its axis groups."""
    if not isinstance(placement, _Placement):
        raise TypeError(f"{what}: placement must be a oneflow.placement, got {type(placement).__name__}")
    s = _as_sbp_tuple(sbp, what, placement)
    if local.device.type != placement.type and not local.is_meta:
        local = local.to(placement.type)
    index = position(placement)
    shape = list(local.shape)
    for one in s:
        _check_split(shape, one, what)
    # Every process of the job exchanges the split components' sizes -- also those of a placement
    # of one process: the processes outside it join the all-gather to learn the logical shape, so
    # the one inside must join it too (it skipped it once, and the others waited forever)
    if any(one._kind == "S" for one in s) and (len(placement._ranks) > 1 or world()[1] > 1):
        if check_meta:
            shape = _logical_shape(shape, index, placement, s, what)
        else:  # every component alike: no exchange
            for one, n in zip(s, placement._hierarchy):
                if one._kind == "S":
                    shape[one._dim] *= n
    if index < 0:  # Note [Ranks outside a placement]: a meta component shaped as the first rank's
        from .. import empty
        meta = empty(levels(shape, s, placement)[-1], dtype=local.dtype, device="meta")
        return GlobalTensor(meta.requires_grad_(True) if local.requires_grad else meta, placement, s, shape)
    from .runtime import axes, group
    for one, apl in zip(s, axes(placement)):
        if one._kind == "B" and len(apl._ranks) > 1:  # the axis group's first rank's value
            from .. import distributed as dist
            first = local.detach().contiguous().clone()  # (the caller's tensor is left as it was)
            dist.broadcast(first, src=apl._ranks[0], group=group(apl._ranks))
            # the first rank's values, and the identity to this rank's tensor for the gradient
            local = local + (first - local).detach() if local.requires_grad else first
    return GlobalTensor(local, placement, s, shape)


def _logical_shape(shape, index, placement, s, what):
    """The logical shape of split components: every process's component shape (all of them, so
    that processes outside the placement learn it too; in nn.Graph's build() the traced shapes,
    exchanged once), summed along each split axis's groups, the last mesh axis first."""
    from .. import _lazy_state, distributed as dist, tensor
    from .runtime import axis_groups
    nd = len(shape)
    with _lazy_state.paused():
        mine = tensor(shape if index >= 0 else [-1] * nd, dtype=_C.int64)
        every = [mine.new_empty((nd,)) for _ in range(world()[1])] if nd else []
        if nd:
            dist.all_gather(every, mine)
        shapes = {r: [int(v) for v in every[r].tolist()] for r in placement._ranks}
    components = {r: list(v) for r, v in shapes.items()}
    for axis in reversed(range(len(s))):
        if s[axis]._kind != "S":
            continue
        d = s[axis]._dim
        for ranks in axis_groups(placement, axis) if len(placement._hierarchy) > 1 else [placement._ranks]:
            total = sum(shapes[r][d] for r in ranks)
            for r in ranks:
                shapes[r][d] = total
    logical = shapes[placement._ranks[0]]
    # every process checks every component (each knows them all), so all raise alike: one that
    # went on would wait in its next collective for the others
    want = {r: list(levels(logical, s, placement, i)[-1]) for i, r in enumerate(placement._ranks)}
    if any(want[r] != components[r] for r in placement._ranks):
        sizes = {r: components[r] for r in placement._ranks}
        raise RuntimeError(f"{what}: the ranks' components have shapes {sizes}, not those of one logical shape "
                           f"{tuple(logical)} laid out as {tuple(s)} ({tuple(tuple(v) for v in want.values())}: a "
                           "split tensor's slices are balanced, the first ranks one element more)")
    return logical


def from_logical(full, placement, sbp, what):
    """A global tensor whose logical value is `full` (made alike on every process: the first
    rank's is taken, so random ones are one draw), laid out as `sbp` (factories' placement=)."""
    if placement is None or sbp is None:
        raise TypeError(f"{what}(): a global tensor needs both placement and sbp")
    return local_to_global(full, placement, all_broadcast(placement), what).to_global(sbp=sbp)


def tensor_to_global(self, placement=None, sbp=None, *, grad_sbp=None, check_meta=True, copy=False):
    """Tensor.to_global / local_to_global on a local tensor: this process's component of a global
    tensor. check_meta=False (OneFlow's: every process's component has the same shape) skips the
    exchange of the components' sizes: a split's logical size is the component's times the ranks."""
    if placement is None or sbp is None:
        raise TypeError("to_global: a local tensor needs both placement and sbp")
    return local_to_global(self.clone() if copy else self, placement, sbp, check_meta=check_meta)


def global_to_global(self, placement=None, sbp=None, *, grad_sbp=None, check_meta=False, copy=False):
    """Tensor.global_to_global: to_global of a global tensor (a local one is a RuntimeError)."""
    if not is_global(self):
        raise RuntimeError("global_to_global: this is a local tensor (use local_to_global)")
    if placement is None and sbp is None:
        raise ValueError("global_to_global: give placement or sbp (or both)")
    return self.to_global(placement, sbp, grad_sbp=grad_sbp, copy=copy)


GlobalTensor.global_to_global = global_to_global


def _global_local_to_global(self, *args, **kwargs):
    raise RuntimeError("local_to_global: this is a global tensor (use global_to_global or to_global)")


GlobalTensor.local_to_global = _global_local_to_global
