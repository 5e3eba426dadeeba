"""flow.autograd.Function: user-defined forward/backward pairs.

`apply` runs `forward(ctx, *args)` without recording, then links the outputs to the tensor
arguments through one C++ node whose backward calls `backward(ctx, *grads)`.
"""
from .. import _global_hooks
from .. import _lazy_state
from .. import _oneflow_internal as _C
from .._grad_mode import no_grad


class FunctionCtx:
    """The `ctx` passed to forward and backward."""

    def __init__(self):
        self._saved = ()
        self._linked = False  # the saved tensors moved into the graph node (see apply)
        self._in_backward = None
        self._non_differentiable = set()
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        self._saved = tensors

    @property
    def saved_tensors(self):
        if self._in_backward is not None:
            return self._in_backward
        if self._linked:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors after "
                "they have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward.")
        return tuple(self._saved)

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        pass  # in-place outputs are relinked by apply like any other output

    def set_materialize_grads(self, value):
        pass  # gradients are always materialised (zeros for unused outputs)


class Function:
    """Subclass and define `forward(ctx, *args)` and `backward(ctx, *grad_outputs)` (static)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement the backward function for custom autograd.Function.")

    @classmethod
    def apply(cls, *args, **kwargs):
        trace = _lazy_state.current()
        if trace is not None and _C._graph_tracing():  # inside nn.Graph's build(): a Python step
            return trace.record_function(cls, args, kwargs)
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(out, (tuple, list))
        outs = [out] if single else list(out)
        tensors = [o if isinstance(o, _C.Tensor) else None for o in outs]
        nondiff = [t is not None and id(t) in ctx._non_differentiable for t in tensors]
        inputs = [a if isinstance(a, _C.Tensor) else None for a in args]
        saved = [t if isinstance(t, _C.Tensor) else None for t in ctx._saved]
        # Note [Functions on global tensors]: the node links the local components; backward sees
        # global tensors again (the outputs' gradients laid out as Note [Gradients of global
        # tensors] has them) and its gradients are laid out as the inputs' gradients.
        out_layouts = in_layouts = saved_layouts = ()
        if any(_is_global(t) for t in (*tensors, *inputs, *saved)):
            out_layouts, in_layouts, saved_layouts = _layouts(tensors), _layouts(inputs), _layouts(saved)
            tensors, inputs, saved = _locals(tensors), _locals(inputs), _locals(saved)

        is_tensor = [t is not None for t in tensors]  # the closure must not hold the outputs (a cycle)

        def run_backward(grads, saved):
            # Only tensor outputs have gradients; other outputs get None.
            it = iter(grads)
            full = [next(it) if k else None for k in is_tensor]
            if any(out_layouts):
                full = _as_global(full, out_layouts, grad=True)
            if any(saved_layouts):
                saved = _as_global(saved, saved_layouts)
            ctx._in_backward = saved
            try:
                r = cls.backward(ctx, *full)
            finally:
                ctx._in_backward = None
            r = r if isinstance(r, (tuple, list)) else (r,)
            return _grad_locals(r, in_layouts) if any(in_layouts) else r

        linked = _C._make_function_node(cls.__name__ + "Backward", inputs, [t for t in tensors if t is not None],
                                        [n for t, n in zip(tensors, nondiff) if t is not None], run_backward,
                                        saved)
        if any(a is not None and a.requires_grad for a in inputs) and _C.is_grad_enabled():
            ctx._linked, ctx._saved = True, ()
        if any(out_layouts):
            linked = _as_global(linked, [lay for t, lay in zip(tensors, out_layouts) if t is not None])
        it = iter(linked)
        result = [next(it) if t is not None else o for o, t in zip(outs, tensors)]
        return result[0] if single else type(out)(result) if isinstance(out, tuple) else result

    def __call__(self, *args, **kwargs):
        return self.apply(*args, **kwargs)


_is_global = _global_hooks.is_global  # Note [Global hooks]


def _layouts(tensors):
    """(placement, sbp, logical shape) of each global tensor among `tensors`, None for the others."""
    return [(t._placement, t._sbp, t._shape) if _is_global(t) else None for t in tensors]


def _locals(tensors):
    return [t._local if _is_global(t) else t for t in tensors]


def _as_global(tensors, layouts, grad=False):
    GlobalTensor, _grad_sbp = _global_hooks.use("GlobalTensor"), _global_hooks.use("grad_sbp")  # Note [Global hooks]
    return tuple(t if lay is None or t is None else
                 GlobalTensor(t, lay[0], _grad_sbp(lay[1]) if grad else lay[1], lay[2])
                 for t, lay in zip(tensors, layouts))


def _grad_locals(grads, layouts):
    """The components of the gradients backward returned, each laid out as its input's gradient."""
    _grad_sbp = _global_hooks.use("grad_sbp")  # Note [Global hooks]
    out = []
    for g, lay in zip(grads, list(layouts) + [None] * (len(grads) - len(layouts))):
        if lay is not None and _is_global(g):
            g = g.to_global(placement=lay[0], sbp=_grad_sbp(lay[1]))._local
        elif lay is not None and g is not None:
            raise RuntimeError("autograd.Function backward: the gradient of a global input must be a global tensor, "
                               f"got {type(g).__name__}")
        out.append(g)
    return tuple(out)

