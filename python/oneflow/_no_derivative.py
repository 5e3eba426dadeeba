"""Python-level ops that PyTorch does not differentiate (histogram, histogramdd, detach_copy):
their results are linked to their inputs through a node whose backward raises, the Python side
of the op table's `backward: not_implemented` (src/ops/table/README.md)."""
from . import _lazy_state
from . import _oneflow_internal as _C


def not_implemented_derivative(op, inputs, outputs):
    """`outputs` (computed from `inputs` without recording) linked to them through a node whose
    backward raises, for Python-level ops PyTorch does not differentiate (histogram, detach_copy):
    their results require grad as PyTorch's do, and a backward through them is PyTorch's error
    rather than a silent zero gradient.
    Returns the outputs as a tuple; unchanged without grad mode or an input requiring grad."""
    outputs = [o.detach() if isinstance(o, _C.Tensor) else o for o in outputs]
    if _lazy_state.current() is not None and _C._graph_tracing():
        return tuple(outputs)  # nn.Graph traces no backward through them

    def run_backward(grads, saved):
        raise NotImplementedError(f"the derivative for '{op}' is not implemented")

    inputs = [a if isinstance(a, _C.Tensor) else None for a in inputs]
    tensors = [o for o in outputs if isinstance(o, _C.Tensor)]
    linked = iter(_C._make_function_node(f"{op}_backward", inputs, tensors, [False] * len(tensors), run_backward, []))
    return tuple(next(linked) if isinstance(o, _C.Tensor) else o for o in outputs)
