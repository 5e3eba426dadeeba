"""SyncBatchNorm's training step across processes (PyTorch's algorithm): each process computes
its per-channel mean, biased variance and count; they are all-gathered and combined (Chan's
parallel formula, stable where sums of squares are not); backward all-reduces the two per-channel
sums the input gradient needs. The weight and bias gradients stay local, as PyTorch's, and
DistributedDataParallel averages them with the rest."""
import oneflow as flow

from ... import distributed as dist


def _stat_dims(x):
    return [0] + list(range(2, x.dim()))


def _channel_view(t, x):
    return t.reshape([1, -1] + [1] * (x.dim() - 2))


class SyncBatchNormFunction(flow.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, group, world):
        if input.is_meta:  # nn.Graph learning the step's output (Note [Collectives in graphs])
            return flow.empty_like(input)
        dims = _stat_dims(input)
        c = input.shape[1]
        count = input.numel() // c
        x = input.float() if input.dtype in (flow.float16, flow.bfloat16) else input
        if count:
            mean = x.mean(dim=dims)
            var = x.var(dim=dims, unbiased=False)
        else:  # an empty share: contributes nothing
            mean = flow.zeros(c, dtype=x.dtype, device=x.device)
            var = flow.zeros(c, dtype=x.dtype, device=x.device)
        local = flow.cat([mean, var, flow.full((1,), float(count), dtype=x.dtype, device=x.device)])
        stats = flow.empty(world, 2 * c + 1, dtype=x.dtype, device=x.device)
        dist.all_gather_into_tensor(stats, local, group=group)
        means, vars_, counts = stats[:, :c], stats[:, c:2 * c], stats[:, 2 * c:]
        total = counts.sum()
        if float(total) == 0:
            raise ValueError("SyncBatchNorm: every process's batch is empty")
        g_mean = (means * counts).sum(0) / total
        g_var = ((vars_ + (means - g_mean) ** 2) * counts).sum(0) / total
        invstd = flow.rsqrt(g_var + eps)
        if running_mean is not None:
            n = float(total)
            with flow.no_grad():
                running_mean.mul_(1 - momentum).add_(g_mean.to(running_mean.dtype) * momentum)
                unbiased = g_var * (n / (n - 1)) if n > 1 else g_var
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        xhat = (x - _channel_view(g_mean, x)) * _channel_view(invstd, x)
        y = xhat
        if weight is not None:
            y = y * _channel_view(weight.to(y.dtype), x)
        if bias is not None:
            y = y + _channel_view(bias.to(y.dtype), x)
        ctx.save_for_backward(x, weight, g_mean, invstd)
        ctx.total, ctx.group, ctx.has_bias, ctx.in_dtype = total, group, bias is not None, input.dtype
        return y.to(input.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, mean, invstd = ctx.saved_tensors
        dims = _stat_dims(x)
        dy = grad_out.to(x.dtype)
        xmu = x - _channel_view(mean, x)
        sum_dy = dy.sum(dim=dims)
        sum_dy_xmu = (dy * xmu).sum(dim=dims)
        grad_weight = sum_dy_xmu * invstd if weight is not None else None
        grad_bias = sum_dy.clone() if ctx.has_bias else None
        both = flow.cat([sum_dy, sum_dy_xmu])
        dist.all_reduce(both, group=ctx.group)
        c = x.shape[1]
        g_sum_dy, g_sum_dy_xmu = both[:c], both[c:]
        scale = invstd if weight is None else invstd * weight.to(x.dtype)
        n = ctx.total
        grad_in = (dy - _channel_view(g_sum_dy / n, x)
                   - xmu * _channel_view(invstd * invstd * g_sum_dy_xmu / n, x)) * _channel_view(scale, x)
        if grad_weight is not None:
            grad_weight = grad_weight.to(weight.dtype)
        if grad_bias is not None:
            grad_bias = grad_bias.to(weight.dtype if weight is not None else x.dtype)
        return grad_in.to(ctx.in_dtype), grad_weight, grad_bias, None, None, None, None, None, None
