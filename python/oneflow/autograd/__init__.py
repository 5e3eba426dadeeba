"""oneflow.autograd: backward, grad and custom Functions over the C++ engine (src/autograd)."""

from .. import _global_hooks
from .. import _lazy_state
from .. import _oneflow_internal as _C
from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .function import Function  # noqa: F401
from . import functional  # noqa: F401,E402  (vjp, jvp, jacobian, hessian, vhp, hvp)
from ._gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401,E402
from . import anomaly_mode  # noqa: F401,E402
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401,E402
from . import graph  # noqa: F401,E402  (saved_tensors_hooks, save_on_cpu)
from ._engine import Variable, _ExecutionEngine, _RemovableHandle, _engine_state, _run_engine  # noqa: F401,E402  (_global/boxing.py queues on the engine)
from .._export import export as _export


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (_C.Tensor, graph.GradientEdge)):
        return [x]
    return list(x)


def _has_edges(*seqs):
    return any(isinstance(x, graph.GradientEdge) for seq in seqs for x in seq)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulates into the leaves' .grad (or only into `inputs`' .grad) the gradients of `tensors`,
    seeded by grad_tensors."""
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors if grad_tensors is not None else grad_variables)
    if grads and len(grads) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    grads = grads or [None] * len(tensors)
    tensors, grads = _components(tensors, grads)
    trace = _lazy_state.current()
    if trace is not None:  # inside nn.Graph's build(): a step of the traced program
        if inputs is not None or create_graph:
            raise RuntimeError("nn.Graph: backward() in build() takes no inputs= / create_graph=")
        trace.record_backward(tensors, grads)
        return
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        _run_engine(_C._run_backward, tensors, grads, bool(retain_graph), bool(create_graph))
        return
    inputs = _as_list(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    results = _run_engine(_C._run_grad, tensors, _components(inputs)[0], grads, bool(retain_graph),
                          bool(create_graph), True)
    results = _global_grads(results, inputs)
    for t, g in zip(inputs, results):
        if g is not None:
            t.grad = g if t.grad is None else t.grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False,
         out_grads=None, is_grads_batched=False):
    """Returns the gradients of `outputs` with respect to `inputs` (a tuple, one per input)."""
    if _lazy_state.current() is not None:
        raise RuntimeError("nn.Graph: autograd.grad() cannot be traced in build(); use loss.backward()")
    outputs = _as_list(outputs)
    inputs_list = _as_list(inputs)
    if grad_outputs is None:
        grad_outputs = out_grads
    grads = _as_list(grad_outputs) or [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad_outputs should be a sequence of length {len(outputs)}, got {len(grads)}")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs, inputs_list, grads, retain_graph, create_graph, allow_unused)
    if _has_edges(outputs, inputs_list):  # GradientEdges among them (autograd.graph)
        return _run_engine(_C._run_grad_edges, [tuple(x) if isinstance(x, graph.GradientEdge) else x for x in outputs],
                           [tuple(x) if isinstance(x, graph.GradientEdge) else x for x in inputs_list], grads,
                           bool(retain_graph), bool(create_graph), bool(allow_unused))
    outputs, grads = _components(outputs, grads)
    results = _run_engine(_C._run_grad, outputs, _components(inputs_list)[0], grads, bool(retain_graph),
                          bool(create_graph), bool(allow_unused))
    return _global_grads(results, inputs_list)


def _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused):
    """grad(..., is_grads_batched=True): every grad_output has a leading batch dim; the result is
    one vector-Jacobian product per batch entry, stacked along a new leading dim (PyTorch's).
    PyTorch vmaps the backward pass; here the engine runs once per entry on the retained graph
    (same values, B passes)."""
    if any(g is None for g in grads):
        raise RuntimeError("grad(): is_grads_batched=True needs a grad_output for every output")
    sizes = {int(g.shape[0]) if g.ndim else None for g in grads}
    if len(sizes) != 1 or None in sizes:
        raise RuntimeError("grad(): with is_grads_batched=True every grad_output needs the same leading batch dim")
    (n,) = sizes
    per_entry = [grad(outputs, inputs, [g[b] for g in grads], retain_graph=True if b + 1 < n else retain_graph,
                      create_graph=create_graph, allow_unused=allow_unused) for b in range(n)]
    results = []
    for k, t in enumerate(inputs):
        parts = [r[k] for r in per_entry]
        if not parts:  # a batch of 0 entries
            results.append(_C.empty([0, *t.shape], dtype=t.dtype, device=t.device))
        elif parts[0] is None:  # unused (allow_unused): the same graph for every entry
            results.append(None)
        else:
            results.append(_C.stack(parts, 0))
    return tuple(results)


def _components(tensors, grads=None):
    """Global tensors (and their seeds, laid out as their gradients) as their local components:
    the engine runs on those (Note [Gradients of global tensors])."""
    if not any(getattr(type(t), "_global_tensor_", False) for t in tensors):  # (the common case: no import)
        return tensors, grads
    _grad_sbp, is_global = _global_hooks.use("grad_sbp"), _global_hooks.is_global  # Note [Global hooks]
    if grads is not None:
        grads = [g.to_global(placement=t._placement, sbp=_grad_sbp(t._sbp))._local if is_global(g) and is_global(t)
                 else g for t, g in zip(tensors, grads)]
    return [t._local if is_global(t) else t for t in tensors], grads


def _global_grads(results, inputs):
    """The gradients of global inputs as global tensors (laid out as their .grad would be)."""
    if not any(getattr(type(t), "_global_tensor_", False) for t in inputs):
        return results
    GlobalTensor, _grad_sbp = _global_hooks.use("GlobalTensor"), _global_hooks.use("grad_sbp")  # Note [Global hooks]
    is_global = _global_hooks.is_global
    return tuple(GlobalTensor(g, t._placement, _grad_sbp(t._sbp), t._shape) if g is not None and is_global(t) else g
                 for g, t in zip(results, inputs))


@_export("Tensor.backward")
def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


@_export("Tensor.register_hook")
def _register_hook(self, hook):
    return _RemovableHandle(self, self._register_hook(hook))


@_export("Tensor.register_post_accumulate_grad_hook")
def _register_post_accumulate_grad_hook(self, hook):
    """hook(tensor) runs after the gradient is accumulated into this leaf's .grad."""
    return _RemovableHandle(self, self._register_post_accumulate_grad_hook(hook))
