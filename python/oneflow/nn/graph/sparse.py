"""``add_optimizer(optim, is_sparse=True)``: OneFlow's indexed-slices update of embedding tables.

In OneFlow a sparse optimizer updates a variable whose gradient is an embedding lookup's (a gather
along dim 0, whose backward is an ``unsorted_segment_sum`` over the looked-up ids) with the
``indexed_slices_*`` update ops: only the rows the step looked up move, and only their optimizer
state (SGD momentum, Adam's moments) is updated; the other rows and their state stay as they were
(their weight decay included). Other parameters of the optimizer update densely.

Here (docs/graph.md "Sparse optimizers"): while a graph with a sparse optimizer traces, each
``nn.Embedding`` whose weight that optimizer updates notes the ids it is called with, as a Python
step of the program (the real ids on each run; nothing is computed on them); the call's step then
runs the optimizer densely and puts back the rows no id named -- parameter and every state tensor
of the parameter's shape -- which is the indexed-slices update: a row no id named has a zero
gradient, and every update rule here is row-wise. Rows named by several ids (or several lookups,
or micro-batches) are one row, updated once with the summed gradient, as the segment sum gives.
"""
import contextlib

from ... import _lazy_state
from ... import _oneflow_internal as _C


def _embedding_weights(graph):
    """{id(weight): weight} of the parameters the graph's sparse optimizers update."""
    out = {}
    for opt, _ in graph._optimizers:
        if id(opt) in graph._sparse_optimizers:
            for group in opt.param_groups:
                for p in group["params"]:
                    out[id(p)] = p
    return out


@contextlib.contextmanager
def note_embedding_rows(graph):
    """While build() is traced: the ids of every nn.Embedding of a sparse optimizer's weight are
    noted on each run (graph._sparse_rows: id(weight) -> (weight, [ids tensors]))."""
    if not graph._sparse_optimizers:
        yield
        return
    from ..modules.sparse import Embedding
    weights = _embedding_weights(graph)
    handles = []

    def pre_hook(module, args):
        weight = module.weight
        if id(weight) not in weights or not args:
            return None
        rows = graph._sparse_rows

        def note(ids):
            rows.setdefault(id(weight), (weight, []))[1].append(ids.detach().reshape(-1).clone())
        note.__qualname__ = "note_embedding_rows"
        _lazy_state.current().record_call(note, (args[0],), {}, meta_fn=lambda ids: None)
        return None
    try:
        for module in graph._modules.values():
            for m in module.modules():
                if isinstance(m, Embedding):
                    handles.append(m.register_forward_pre_hook(pre_hook))
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def sparse_update(graph, opt):
    """Around a sparse optimizer's step: the rows of each noted embedding weight that no id named
    keep their values and state."""
    from ..._grad_mode import no_grad
    if id(opt) not in graph._sparse_optimizers:
        yield
        return
    kept = []
    with no_grad():
        for weight, ids in graph._sparse_rows.values():
            if weight.grad is None:
                continue
            untouched = _C.ones(weight.shape[0], dtype=_C.bool, device=weight.device)
            for i in ids:
                untouched[i.to(weight.device).long()] = False
            mask = untouched.reshape([-1] + [1] * (weight.dim() - 1))
            state = opt.state.get(weight, {})
            before = {k: v.clone() for k, v in state.items() if hasattr(v, "shape") and tuple(v.shape) == tuple(weight.shape)}
            kept.append((weight, mask, weight.detach().clone(), before))
    yield
    with no_grad():
        for weight, mask, old, before in kept:
            weight.copy_(_C.where(mask, old, weight))
            state = opt.state.get(weight, {})
            for k, v in before.items():  # (state made by this step: its rows start from zero)
                if k in state:
                    state[k].copy_(_C.where(mask, v, state[k]))
            for k, v in state.items():
                if k not in before and hasattr(v, "shape") and tuple(v.shape) == tuple(weight.shape):
                    v.copy_(_C.where(mask, v.new_zeros(()), v))

