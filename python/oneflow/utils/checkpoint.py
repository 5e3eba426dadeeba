"""oneflow.utils.checkpoint: activation checkpointing (as torch.utils.checkpoint).

checkpoint(function, *args) runs `function` without recording its graph and keeps only its
inputs; the backward pass runs it again with grad enabled (under the random state the first run
saw, so dropout draws the same masks) and back-propagates through that recomputation. Memory
for the intermediate activations is traded for a second forward pass.

Both `use_reentrant` modes recompute through one autograd.Function node. With
use_reentrant=False (PyTorch's recommended mode) the node also takes a zero-size tensor that
requires grad, so parameters used inside `function` get gradients even when no input requires
grad, and keyword arguments are passed through; use_reentrant=True keeps PyTorch's reentrant
contract (at least one input should require grad, else nothing is recorded and a warning says
so). context_fn (non-reentrant mode) gives two context managers: the first run of `function` is
inside the first, each recomputation inside the second (context_fn is called again for every
recomputation after the first). Not provided: create_selective_checkpoint_contexts, which needs
an op-level dispatch hook. After a backward the node keeps `function` only weakly (the graph's C++ nodes are invisible
to Python's garbage collector, so a strong reference could close an uncollectable cycle through
the user's module); a second backward with retain_graph=True then needs the function alive
elsewhere (a module, a named function), not a temporary lambda.
"""
import oneflow as flow
import contextlib
import inspect
import warnings
import weakref

from .. import _global_hooks
from .. import _oneflow_internal as _C
from ..autograd import Function

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "check_backward_validity", "detach_variable",
           "get_device_states", "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "set_checkpoint_debug_enabled"]


class CheckpointError(RuntimeError):
    """A checkpointed region's recomputation went wrong."""


def noop_context_fn():
    """The default context_fn: no context around either run."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """The tuple of inputs detached (tensors keep their requires_grad), others as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for x in inputs:
        if isinstance(x, _C.Tensor):
            d = x.detach()
            d.requires_grad_(x.requires_grad)
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(isinstance(x, _C.Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")


def get_device_states(*args):
    """(device indices, their CUDA RNG states) of the CUDA tensors among args."""
    devices = sorted({a.device.index or 0 for a in args if isinstance(a, _C.Tensor) and a.device.type == "cuda"})
    return devices, [flow.cuda.get_rng_state(d) for d in devices]


def set_device_states(devices, states, *, device_type=None):
    for d, s in zip(devices, states):
        flow.cuda.set_rng_state(s, d)


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Accepted for torch's API: a recomputation here always runs the whole function (there is
    no early stop to switch)."""
    yield


_DEBUG = [False]


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Sets the default of checkpoint(debug=) inside the block (None: leave it)."""
    old = _DEBUG[0]
    if enabled is not None:
        _DEBUG[0] = bool(enabled)
    try:
        yield
    finally:
        _DEBUG[0] = old


def _rng_states(devices):
    states = [flow.get_rng_state()]
    for d in devices:
        states.append(flow.cuda.get_rng_state(d))
    return states


def _set_rng_states(states, devices):
    flow.set_rng_state(states[0])
    for d, s in zip(devices, states[1:]):
        flow.cuda.set_rng_state(s, d)


def _release(ctx):
    """After a backward: the function is kept only weakly, so that the graph node (which Python's
    garbage collector cannot see into) holds no reference cycle through the user's code; a
    second backward (retain_graph) still works while the function is alive elsewhere."""
    fn = ctx.fn
    try:
        ctx.fn_ref = weakref.WeakMethod(fn) if inspect.ismethod(fn) else weakref.ref(fn)
    except TypeError:
        ctx.fn_ref = None
    ctx.fn = None


class _Checkpoint(Function):
    """(fn, kwargs, anchored, preserve_rng_state, *args) -> fn(*args, **kwargs), recomputed in
    backward; anchored: args[0] is the zero-size anchor tensor (non-reentrant mode), not passed."""

    @staticmethod
    def _call(ctx, args):
        fn = ctx.fn if ctx.fn is not None else (ctx.fn_ref() if ctx.fn_ref is not None else None)
        if fn is None:
            raise RuntimeError("checkpoint: the checkpointed function no longer exists for a second backward")
        return fn(*(args[1:] if ctx.anchored else args), **ctx.kwargs)

    @staticmethod
    def forward(ctx, fn, kwargs, anchored, preserve_rng_state, context_fn, *args):
        ctx.fn, ctx.fn_ref, ctx.kwargs, ctx.anchored = fn, None, kwargs, anchored
        forward_context, ctx.recompute_context = context_fn()
        ctx.context_fn = context_fn
        ctx.preserve = preserve_rng_state
        ctx.devices = sorted({a.device.index or 0 for a in args
                              if isinstance(a, _C.Tensor) and a.device.type == "cuda"})
        if preserve_rng_state:
            ctx.rng = _rng_states(ctx.devices)
        ctx.layout = [isinstance(a, _C.Tensor) for a in args]
        ctx.others = [None if t else a for t, a in zip(ctx.layout, args)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, _C.Tensor)))
        with flow.no_grad(), forward_context:
            out = _Checkpoint._call(ctx, args)
        ctx.single = not isinstance(out, tuple)
        return out

    @staticmethod
    def backward(ctx, *grads):
        saved = iter(ctx.saved_tensors)
        inputs = []
        for is_tensor, other in zip(ctx.layout, ctx.others):
            if is_tensor:
                t = next(saved)
                d = t.detach()
                d.requires_grad_(t.requires_grad)
                inputs.append(d)
            else:
                inputs.append(other)
        if ctx.preserve:
            current = _rng_states(ctx.devices)
            _set_rng_states(ctx.rng, ctx.devices)
        recompute_context = ctx.recompute_context or ctx.context_fn()[1]
        ctx.recompute_context = None  # (a context manager is entered once; later runs ask again)
        try:
            with flow.enable_grad(), recompute_context:
                out = _Checkpoint._call(ctx, inputs)
        finally:
            if ctx.preserve:
                _set_rng_states(current, ctx.devices)
        outs = (out,) if ctx.single else tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, _C.Tensor) and o.requires_grad and g is not None]
        if pairs:
            flow.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        if ctx.fn is not None:
            _release(ctx)
        return (None, None, None, None, None) + tuple(i.grad if isinstance(i, _C.Tensor) and i.requires_grad else None
                                    for i in inputs)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """Runs function(*args, **kwargs) keeping only its inputs; its activations are recomputed in
    the backward pass."""
    if use_reentrant is None:
        use_reentrant = False
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and (context_fn is not None or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    context_fn = context_fn or noop_context_fn
    if not _C.is_grad_enabled():
        return function(*args, **kwargs)
    if any(getattr(type(a), "_oneflow_global_", False) for a in args):
        return _checkpoint_global(function, args, kwargs, use_reentrant, preserve_rng_state, context_fn)
    if use_reentrant:
        if not any(isinstance(a, _C.Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")
        return _Checkpoint.apply(function, kwargs, False, preserve_rng_state, context_fn, *args)
    anchor = flow.empty(0, requires_grad=True)
    return _Checkpoint.apply(function, kwargs, True, preserve_rng_state, context_fn, anchor, *args)


def _checkpoint_global(function, args, kwargs, use_reentrant, preserve_rng_state, context_fn):
    """checkpoint() over global tensors (docs/global_tensors.md): their local components go through
    the recomputing Function, the function sees global tensors again, and its global outputs come
    back laid out as the first run made them."""
    GlobalTensor, is_global = _global_hooks.use("GlobalTensor"), _global_hooks.is_global  # Note [Global hooks]
    specs = [(a._placement, a._sbp, a._shape) if is_global(a) else None for a in args]
    layouts = []

    def on_components(*parts, **kw):
        out = function(*[GlobalTensor(p, *spec) if spec else p for p, spec in zip(parts, specs)], **kw)
        single = not isinstance(out, tuple)
        res = []
        for k, o in enumerate((out,) if single else out):
            if is_global(o):
                if len(layouts) <= k:
                    layouts.append((o._placement, o._sbp, o._shape))
                res.append(o._local)
            else:
                if len(layouts) <= k:
                    layouts.append(None)
                res.append(o)
        return res[0] if single else tuple(res)
    out = checkpoint(on_components, *[a._local if spec else a for a, spec in zip(args, specs)],
                     use_reentrant=use_reentrant, preserve_rng_state=preserve_rng_state,
                     context_fn=None if use_reentrant else context_fn, **kwargs)
    single = not isinstance(out, tuple)
    wrapped = [GlobalTensor(o, *layout) if layout else o for o, layout in zip((out,) if single else out, layouts)]
    return wrapped[0] if single else tuple(wrapped)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a Sequential (or a list of modules / functions) in `segments` checkpointed chunks;
    the last chunk runs normally (its output is needed for the backward anyway)."""
    if isinstance(functions, flow.nn.Sequential):
        functions = list(functions.children())
    functions = list(functions)
    if segments <= 0:
        raise ValueError(f"checkpoint_sequential: segments must be positive, got {segments}")
    size = len(functions) // segments
    if size == 0:
        size, segments = 1, len(functions)

    def run_range(start, end):
        def forward(x):
            for f in functions[start:end]:
                x = f(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run_range(start, end + 1), input, use_reentrant=use_reentrant, **kwargs)
    return run_range(end + 1, len(functions))(input)
