"""The modules of an nn.Graph as the graph sees them (OneFlow's ModuleBlock): a graph's module
attribute is a `Block` -- the module with a `config` -- whose sub-module attributes are blocks too;
everything else is the module's own.

Note [Block configs]: a block's config belongs to its module (one per module, wherever the module
is reached from), and acts when a graph traces a call of the module -- also a call from inside
another module's forward, which calls the module itself, not its block:
- `set_stage(stage_id, placement)`: the module is a pipeline stage on `placement`; global tensors
  given to it on another placement are moved there first (their sbp kept when the mesh shapes
  agree, else broadcast), as OneFlow's compiler inserts the transfers between stages;
- `activation_checkpointing = True`: the module's activations are not kept for the backward pass
  but recomputed there (utils.checkpoint: the module's forward becomes a Python step of the
  program that runs again during the backward)."""
import contextlib
import weakref

from ... import _lazy_state
from ... import _oneflow_internal as _C
from ..modules.module import Module

_configs = weakref.WeakKeyDictionary()  # module -> BlockConfig


def _tracing_graph():
    trace = _lazy_state.current()
    return trace is not None and getattr(trace, "global_tensors", False)  # (nn.Graph's trace)


def _check_stage(stage_id, placement):
    from ..._global.placement import placement as Placement
    if stage_id is not None and (isinstance(stage_id, bool) or not isinstance(stage_id, int) or stage_id < 0):
        raise ValueError(f"set_stage: stage_id must be a non-negative int, got {stage_id!r}")
    if placement is not None and not isinstance(placement, Placement):
        raise TypeError(f"set_stage: placement must be a oneflow.placement, got {type(placement).__name__}")


class BlockConfig:
    """``block.config``: the module's pipeline stage and activation checkpointing."""

    def __init__(self, module):
        self._module = weakref.ref(module)
        self._stage_id, self._placement, self._checkpointing = None, None, False
        self._hooked = False

    @property
    def stage_id(self):
        return self._stage_id

    @stage_id.setter
    def stage_id(self, value):
        self.set_stage(value, self._placement)

    @property
    def stage_placement(self):
        return self._placement

    def set_stage(self, stage_id=None, placement=None):
        """Makes the module pipeline stage `stage_id` on `placement` (Note [Block configs])."""
        _check_stage(stage_id, placement)
        self._stage_id, self._placement = stage_id, placement
        self._hook()

    @property
    def activation_checkpointing(self):
        return self._checkpointing

    @activation_checkpointing.setter
    def activation_checkpointing(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"activation_checkpointing must be a bool, got {type(value).__name__}")
        self._checkpointing = value
        self._hook()

    def _hook(self):
        module = self._module()
        if self._hooked or module is None:
            return
        self._hooked = True
        module.register_forward_pre_hook(_to_stage)
        own = module.__dict__.get("forward")  # (a forward set on the instance is the one wrapped)
        module.forward = _checkpointed(module, (lambda m, *a, **k: own(*a, **k)) if own else type(module).forward)

    def __repr__(self):
        return (f"BlockConfig(stage_id={self._stage_id}, placement={self._placement}, "
                f"activation_checkpointing={self._checkpointing})")


def _config(module):
    cfg = _configs.get(module)
    if cfg is None:
        cfg = _configs[module] = BlockConfig(module)
    return cfg


def _to_stage(module, args):
    """Forward pre-hook: global inputs moved to the module's stage placement while a graph traces."""
    cfg = _configs.get(module)
    if cfg is None or cfg._placement is None or not _tracing_graph():
        return None
    target = cfg._placement

    def move(obj):
        if getattr(type(obj), "_oneflow_global_", False) and hasattr(obj, "placement") and obj.placement != target:
            sbp = obj.sbp if len(obj.placement.hierarchy) == len(target.hierarchy) else None
            if sbp is None:
                from ...sbp import broadcast
                sbp = (broadcast,) * len(target.hierarchy)
            return obj.to_global(placement=target, sbp=sbp)
        if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
            return type(obj)(move(o) for o in obj)
        return obj
    return tuple(move(a) for a in args)


@contextlib.contextmanager
def _meta_state(module):
    """The module's parameters and buffers swapped for meta copies (its forward applied to meta
    inputs, to learn its outputs' shapes), put back after."""
    from ... import _oneflow_internal as _C
    saved = []
    for m in module.modules():
        for store in (m._parameters, m._buffers):
            for k, t in list(store.items()):
                if getattr(type(t), "_oneflow_global_", False):
                    if not t._local.is_meta:
                        from ..._global.tensor import GlobalTensor  # (a global one: its component)
                        saved.append((store, k, t))
                        store[k] = GlobalTensor(_C._to_meta(t._local), t._placement, t._sbp, t._shape)
                elif isinstance(t, _C.Tensor) and not t.is_meta:
                    saved.append((store, k, t))
                    store[k] = _C._to_meta(t)
    try:
        yield
    finally:
        for store, k, t in saved:
            store[k] = t


def _checkpointed(module, forward):
    ref = weakref.ref(module)

    def run(*args, **kwargs):
        m = ref()
        cfg = _configs.get(m)
        if cfg is None or not cfg._checkpointing or not _tracing_graph():
            return forward(m, *args, **kwargs)
        from ... import is_grad_enabled
        from ...utils.checkpoint import checkpoint

        def real(*a, **k):
            return checkpoint(lambda *aa, **kk: forward(m, *aa, **kk), *a, use_reentrant=False, **k)

        def meta(*a, **k):
            with _meta_state(m):
                return forward(m, *a, **k)
        out = _lazy_state.current().record_call(real, args, kwargs, meta_fn=meta)
        if is_grad_enabled() and any(p.requires_grad for p in m.parameters()):
            for o in (out if isinstance(out, (tuple, list)) else [out]):
                if hasattr(o, "requires_grad_") and (o.is_floating_point() or o.is_complex()):
                    o.requires_grad_(True)
        return out
    return run


# OneFlow's name for a module's graph-side view (`block.to(nn.graph.GraphModule)`): the same
# object as `block.config`, whose class carries set_stage / stage_id / activation_checkpointing.
GraphModule = BlockConfig


class Proxy:
    """OneFlow's `nn.graph.Proxy`: what a graph's attribute is from outside the graph -- a Block
    (a module) or a ProxyTensor (a module's parameter or buffer)."""

    __slots__ = ()


# tensor id -> (weak reference, stage id, placement): a GraphTensor's stage, kept per tensor as a
# BlockConfig is per module (keyed by id: a tensor's `==` is elementwise, so no WeakKeyDictionary).
_tensor_stages = {}


def tensor_stage(t):
    """(stage id, placement) that `t.to(GraphTensor).set_stage` gave the tensor, or None."""
    entry = _tensor_stages.get(id(t))
    return entry[1:] if entry is not None and entry[0]() is t else None


class GraphTensor:
    """OneFlow's graph-side view of a module's tensor (``proxy.to(nn.graph.GraphTensor)``): its
    attribute name and kind, ``"PARAMETER"`` or ``"BUFFER"``, and its pipeline stage.

    ``set_stage(stage_id, placement)`` (LiBai stages its models' position embeddings and class
    tokens with the first layer) records the stage in the graph's stage table beside its modules'
    (pipeline.stages: a stage id set on two placements raises). The tensor stays where it is:
    in OneFlow too a parameter is a variable of its own placement, the stage only schedules."""

    def __init__(self, name, kind, tensor=None):
        self.name, self.type, self._tensor = name, kind, tensor

    def set_stage(self, stage_id=None, placement=None):
        _check_stage(stage_id, placement)
        t = self._tensor
        if t is None:
            raise RuntimeError(f"set_stage: GraphTensor {self.name!r} is not the view of a tensor")
        key = id(t)
        _tensor_stages[key] = (weakref.ref(t, lambda _, k=key: _tensor_stages.pop(k, None)), stage_id, placement)

    @property
    def stage_id(self):
        stage = tensor_stage(self._tensor)
        return stage[0] if stage else None

    @stage_id.setter
    def stage_id(self, value):
        self.set_stage(value, self.stage_placement)

    @property
    def stage_placement(self):
        stage = tensor_stage(self._tensor)
        return stage[1] if stage else None

    def __repr__(self):
        return f"GraphTensor(name={self.name!r}, type={self.type!r})"


class ProxyTensor(Proxy):
    """A module's parameter or buffer reached through a graph's block outside build() (OneFlow's
    ProxyTensor; while build() traces, the block gives the tensor itself): ``to(flow.Tensor)`` is
    the tensor, ``to(nn.graph.GraphTensor)`` its graph-side view; other attributes and methods
    are the tensor's."""

    __slots__ = ("_origin", "_name", "_kind")

    def __init__(self, origin, name, kind):
        object.__setattr__(self, "_origin", origin)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_kind", kind)

    def to(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], type):
            if issubclass(args[0], GraphTensor):
                return GraphTensor(self._name, self._kind, self._origin)
            if issubclass(args[0], _C.Tensor):
                return self._origin
        return self._origin.to(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._origin, name)

    def __setattr__(self, name, value):
        setattr(self._origin, name, value)

    def __repr__(self):
        return f"({self._kind}:{self._name}): {self._origin!r}"


class Block(Proxy):
    """A module inside an nn.Graph (OneFlow's ModuleBlock): calls, attributes and methods are the
    module's; sub-modules are blocks, and outside build() its parameters and buffers are
    ProxyTensors; `config` is the module's BlockConfig."""

    __slots__ = ("_module",)

    def __init__(self, module):
        object.__setattr__(self, "_module", module)

    @property
    def config(self):
        return _config(self._module)

    @property
    def origin(self):
        """The module itself."""
        return self._module

    def __call__(self, *args, **kwargs):
        return self._module(*args, **kwargs)

    def to(self, *args, **kwargs):
        """OneFlow's proxy API: `block.to(nn.graph.GraphModule)` is the graph-side view (its
        config: set_stage, activation_checkpointing), `block.to(nn.Module)` the module itself;
        anything else is the module's own `to` (device / dtype)."""
        if len(args) == 1 and not kwargs and isinstance(args[0], type):
            if issubclass(args[0], GraphModule):
                return self.config
            if issubclass(args[0], Module):
                return self._module
        return self._module.to(*args, **kwargs)

    # The module tree as blocks (upstream's proxies iterate blocks, whose config is per module).
    def modules(self):
        return (Block(m) for m in self._module.modules())

    def children(self):
        return (Block(m) for m in self._module.children())

    def named_modules(self, *args, **kwargs):
        return ((n, Block(m)) for n, m in self._module.named_modules(*args, **kwargs))

    def named_children(self):
        return ((n, Block(m)) for n, m in self._module.named_children())

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if isinstance(value, Module):
            return Block(value)
        if _lazy_state.current() is None:  # (outside build(): OneFlow's proxy of the tensor)
            m = self._module
            if name in m._parameters and value is not None:
                return ProxyTensor(value, name, "PARAMETER")
            if name in m._buffers and value is not None:
                return ProxyTensor(value, name, "BUFFER")
        return value

    def __setattr__(self, name, value):
        setattr(self._module, name, value)

    def __getitem__(self, index):
        value = self._module[index]
        return Block(value) if isinstance(value, Module) else value

    def __iter__(self):
        return (Block(m) if isinstance(m, Module) else m for m in self._module)

    def __len__(self):
        return len(self._module)

    def __repr__(self):
        return f"(MODULE:{type(self._module).__name__}): {self._module!r}"
