"""nn.functional forms PyTorch has outside OneFlow's spec, composed of table ops: gumbel_softmax,
channel_shuffle, pdist, the *_with_indices names of the max poolings, and OneFlow's
ctc_greedy_decoder."""
import numbers

import oneflow as flow

from .._argcheck import check_tensor


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution: softmax((logits + g) / tau) with standard
    Gumbel noise g; hard: the one-hot of the argmax with the soft sample's gradient."""
    g = -flow.empty_like(logits).exponential_().log()
    y = flow.softmax((logits + g) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    one_hot = flow.zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot - y.detach() + y


def channel_shuffle(input, groups):
    """Rearranges the C channels of (N, C, *) as (groups, C / groups) -> (C / groups, groups)."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n, rest = input.shape[0], tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape((n, c) + rest)


def pdist(input, p=2):
    """The p-norm distances between the rows of a 2-D input, for each pair i < j (row-major)."""
    check_tensor(input, "pdist", "input", 1)
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:  # a complex input's distances would be those of its moduli
        raise RuntimeError(f"pdist(): pdist only supports floating-point dtypes, got {input.dtype.name}")
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"pdist(): argument 'p' (position 2) must be float, not {type(p).__name__}")
    if not p >= 0:  # NaN too: it compared false with 0 and gave NaN distances (PyTorch refuses it)
        raise RuntimeError("pdist(): pdist only supports non-negative p values")
    n = input.shape[0]
    if n < 2:
        return flow.empty(0, dtype=input.dtype, device=input.device)
    i, j = flow.triu_indices(n, n, 1, device=input.device)
    return flow.linalg.vector_norm(input[i] - input[j], p, dim=1)


def _with_indices(pool):
    def fn(*args, **kwargs):
        return pool(*args, **{**kwargs, "return_indices": True})
    fn.__name__ = pool.__name__ + "_with_indices"
    return fn


__all__ = ["gumbel_softmax", "channel_shuffle", "pdist", "ctc_greedy_decoder"]


def ctc_greedy_decoder(log_probs, input_lengths, merge_repeated=True):
    """OneFlow's greedy (best-path) CTC decoding of log_probs (T, N, C), the blank being the last
    class: per sequence the argmax class of each of its first input_lengths[b] steps, blanks
    dropped and (merge_repeated) runs of one class merged. Returns (decoded (N, T) int64, labels
    left-aligned and zero-padded; neg_sum_logits (N, 1): minus the summed maximal log-probs)."""
    check_tensor(log_probs, "ctc_greedy_decoder", "log_probs", 1)
    check_tensor(input_lengths, "ctc_greedy_decoder", "input_lengths", 2)
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_greedy_decoder(): log_probs must be (T, N, C), got shape {list(log_probs.shape)}")
    t_max, n, c = log_probs.shape
    if list(input_lengths.shape) != [n]:
        raise RuntimeError(f"ctc_greedy_decoder(): input_lengths must have shape [{n}], got {list(input_lengths.shape)}")
    best, cls = log_probs.max(dim=2)  # (T, N)
    steps = flow.arange(t_max, device=log_probs.device).unsqueeze(1)
    valid = steps < input_lengths.to(flow.int64).unsqueeze(0)
    neg_sum = -(best * valid.to(best.dtype)).sum(0).unsqueeze(1)
    keep = valid & (cls != c - 1)
    if merge_repeated and t_max > 1:  # the class of the step before (also a blank's) is the run
        prev = flow.cat([flow.full((1, n), -1, dtype=cls.dtype, device=cls.device), cls[:-1]], 0)
        keep = keep & (cls != prev)
    slot = keep.to(flow.int64).cumsum(0) - 1  # each kept label's place in its sequence
    decoded = flow.zeros(n, t_max, dtype=flow.int64, device=log_probs.device)
    t_idx, b_idx = flow.nonzero(keep, as_tuple=True)
    decoded[b_idx, slot[t_idx, b_idx]] = cls[t_idx, b_idx].to(flow.int64)
    return decoded, neg_sum
