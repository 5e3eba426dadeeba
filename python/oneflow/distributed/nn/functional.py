"""oneflow.distributed.nn.functional: collectives that autograd sees through (PyTorch's
torch.distributed.nn.functional), for model-parallel layers. Each returns new tensors; the
backward of each is the adjoint collective: all_reduce's gradient is the all-reduce of the output
gradients, all_gather's is the reduce-scatter of them, broadcast's the reduce to the source, and
so on."""
import oneflow as flow

from .. import _collectives as C
from .._pg import ReduceOp, _group, _peer


def _world(group):
    g = _group(group)
    if g is None:
        raise RuntimeError("distributed.nn.functional: this process is not a member of the group")
    return g


class _AllReduce(flow.autograd.Function):
    @staticmethod
    def forward(ctx, op, group, x):
        ctx.group = group
        out = x.clone()
        C.all_reduce(out, op, group)
        return out

    @staticmethod
    def backward(ctx, grad):
        # (PyTorch's rule for every op: the gradient of the sum; MAX / MIN route through it too)
        return None, None, _AllReduce.apply(ReduceOp.SUM, ctx.group, grad)


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """The reduction over the group's processes, as a new tensor with a gradient."""
    return _AllReduce.apply(op, group, tensor)


class _Broadcast(flow.autograd.Function):
    @staticmethod
    def forward(ctx, src, group, x):
        ctx.src, ctx.group = src, group
        out = x.clone()
        C.broadcast(out, src, group)
        return out

    @staticmethod
    def backward(ctx, grad):
        g = grad.clone()
        C.reduce(g, ctx.src, ReduceOp.SUM, ctx.group)
        pg = _world(ctx.group)
        if pg.rank() != _peer(pg, ctx.src, "src"):  # only the source's input reached the outputs
            g = flow.zeros_like(g)
        return None, None, g


def broadcast(tensor, src, group=None):
    return _Broadcast.apply(src, group, tensor)


class _AllGather(flow.autograd.Function):
    @staticmethod
    def forward(ctx, group, x):
        g = _world(group)
        ctx.group, ctx.like = group, x
        outs = [flow.empty_like(x) for _ in range(g.size())]
        C.all_gather(outs, x.contiguous(), group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        stacked = flow.stack([gr if gr is not None else flow.zeros_like(ctx.like) for gr in grads])
        out = flow.empty_like(stacked[0])
        C.reduce_scatter_tensor(out, stacked.contiguous(), ReduceOp.SUM, ctx.group)
        return None, out


def all_gather(tensor, group=None):
    """Every process's tensor, as a tuple in rank order."""
    return _AllGather.apply(group, tensor)


class _ReduceScatter(flow.autograd.Function):
    @staticmethod
    def forward(ctx, op, group, *inputs):
        ctx.group = group
        out = flow.empty_like(inputs[0])
        C.reduce_scatter(out, list(inputs), op, group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (None, None) + _AllGather.apply(ctx.group, grad)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None):
    """The reduction of every process's input_list[rank] (`output` gives the shape; PyTorch's
    signature)."""
    return _ReduceScatter.apply(op, group, *input_list)


class _AllToAll(flow.autograd.Function):
    @staticmethod
    def forward(ctx, group, out_shapes, *inputs):
        ctx.group, ctx.in_shapes, ctx.out_shapes = group, [tuple(t.shape) for t in inputs], list(out_shapes)
        outs = [flow.empty(s, dtype=inputs[0].dtype, device=inputs[0].device) for s in out_shapes]
        C.all_to_all(outs, [t.contiguous() for t in inputs], group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        grads = [g if g is not None else flow.zeros(s) for g, s in zip(grads, ctx.out_shapes)]
        return (None, None) + _AllToAll.apply(ctx.group, ctx.in_shapes, *grads)


def all_to_all(output_tensor_list, input_tensor_list, group=None):
    """Block j of the result (shaped as output_tensor_list[j]) comes from process j's
    input_tensor_list[rank]."""
    return _AllToAll.apply(group, [tuple(t.shape) for t in output_tensor_list], *input_tensor_list)
