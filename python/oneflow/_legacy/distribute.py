"""The job-function API's distribution casts (spec INVENTORY F): ``flow.distribute.split(axis) /
broadcast() / auto()``, ``flow.parallel_cast``, ``flow.hierarchical_parallel_cast`` (SBP strings
"S(0)", "B", "P"), ``flow.cast_to_current_logical_view``, ``flow.eager_nccl_all_reduce`` and
``flow.distributed_partial_fc_sample``. A job here runs on one device, where every distribution of
a blob is the whole blob: the casts return their input (after checking their arguments). Given a
global tensor (docs/global_tensors.md), the casts re-lay it out (boxing) and the all-reduce sums
its components."""
import re

import numpy as np


class Distribute:
    """``oneflow._oneflow_internal.distribute.Distribute``: split(axis), broadcast or auto."""

    def __init__(self, kind, axis=None):
        self.kind, self.axis = kind, axis

    def __repr__(self):
        return f"flow.distribute.split({self.axis})" if self.kind == "S" else f"flow.distribute.{self.kind}()"

    def sbp(self):
        from .. import sbp
        return sbp.split(self.axis) if self.kind == "S" else sbp.broadcast if self.kind == "broadcast" else None


def split(axis):
    if isinstance(axis, bool) or not isinstance(axis, int) or axis < 0:
        raise ValueError(f"distribute.split: axis must be a non-negative int, got {axis!r}")
    return Distribute("S", axis)


def broadcast():
    return Distribute("broadcast")


def auto():
    return Distribute("auto")


def _is_global(x):
    return getattr(x, "_oneflow_global_", False)


def parallel_cast(input, name=None, distribute=None, gradient_distribute=None):  # noqa: A002
    for d in (distribute, gradient_distribute):
        if d is not None and not isinstance(d, Distribute):
            raise TypeError(f"parallel_cast: distribute must come from flow.distribute, got {d!r}")
    if _is_global(input) and distribute is not None and distribute.sbp() is not None:
        return input.to_global(sbp=distribute.sbp())
    return input


_SBP_STR = re.compile(r"^(S\((\d+)\)|B|P)$")


def _parse_sbp(s):
    from .. import sbp
    m = _SBP_STR.match(s.strip()) if isinstance(s, str) else None
    if m is None:
        raise ValueError(f"hierarchical_parallel_cast: an SBP string is 'S(axis)', 'B' or 'P', got {s!r}")
    return sbp.split(int(m.group(2))) if m.group(2) is not None else sbp.broadcast if m.group(1) == "B" else sbp.partial_sum


def nd_sbp(parallel_distribution, what="hierarchical_parallel_cast"):
    """0.x's parallel_distribution -- SBP strings ("S(0)", "B", "P") or flow.distribute values,
    one per axis of the placement's hierarchy, or one str -- as a tuple of flow.sbp values."""
    from .. import sbp
    items = [parallel_distribution] if isinstance(parallel_distribution, (str, Distribute)) else parallel_distribution
    if not isinstance(items, (list, tuple)) or not items:
        raise ValueError(f"{what}: parallel_distribution is a list of SBP strings, got {parallel_distribution!r}")
    out = []
    for s in items:
        if isinstance(s, Distribute):
            if s.kind == "auto":
                raise ValueError(f"{what}: flow.distribute.auto() has no layout of its own")
            out.append(s.sbp())
        else:
            try:
                out.append(_parse_sbp(s))
            except ValueError:
                raise ValueError(f"{what}: an SBP string is 'S(axis)', 'B' or 'P', got {s!r}") from None
    return tuple(out)


# Note [Casts on a mesh]: 0.x's hierarchical_parallel_cast gives a blob one SBP per axis of its
# placement's hierarchy (flow.scope.placement(tag, ids, (2, 2)): the ranks as a 2 x 2 mesh). In a
# job over several ranks the blobs are global tensors on that mesh (Note [Jobs over several
# ranks], job.py), and the cast is the global layer's to_global with those SBPs (its boxing moves
# the data); the gradient flows back through the same boxing, so grad_mode and
# grad_parallel_distribution (0.x's choice of the gradient's layout) are checked and otherwise
# accepted: the gradient's values do not depend on them. A job on one device is a hierarchy of
# one: there every layout of a blob is the whole blob and the cast returns it, whatever the
# number of axes.
def hierarchical_parallel_cast(input, parallel_distribution, grad_mode=None, grad_parallel_distribution=None,  # noqa: A002
                               name=None):
    sbps = nd_sbp(parallel_distribution)
    if grad_parallel_distribution is not None:
        nd_sbp(grad_parallel_distribution)
    if grad_mode not in (None, "auto", "identity", "manual"):
        raise ValueError(f"hierarchical_parallel_cast: grad_mode is 'auto', 'identity' or 'manual', got {grad_mode!r}")
    if _is_global(input):
        axes = len(input.placement.hierarchy)
        if len(sbps) != axes:
            raise ValueError(f"hierarchical_parallel_cast: {len(sbps)} SBP {list(parallel_distribution)} for a blob "
                             f"on a placement of hierarchy {input.placement.hierarchy} (one per axis)")
        return input.to_global(sbp=sbps)
    return input


def cast_to_current_logical_view(x):
    """0.x's cast of a mirrored blob to the job's logical view. In a job over several ranks a local
    tensor -- a rank's own part, such as the dense batch made from its tensor list (Note [Tensor
    lists over several ranks] in job.py) -- becomes the global tensor of every rank's part, split
    along dim 0: their rows concatenated in rank order, each rank's count its own (on a mesh split
    over every axis, as a job's inputs; a 0-d part the first rank's, broadcast). A global tensor,
    and anything in a job on one device, is returned as it is."""
    from ._job_state import current_job
    job = current_job()
    if job is None or job.placement is None or _is_global(x):
        return x
    from .. import sbp
    one = sbp.split(0) if x.ndim else sbp.broadcast
    return x.to_global(job.placement, (one,) * len(job.placement.hierarchy))


def eager_nccl_all_reduce(x, parallel_conf, name=None):
    """The sum over the devices of `parallel_conf` (one here: x itself); a global partial-sum
    tensor is summed over its ranks."""
    if not isinstance(parallel_conf, str):
        raise TypeError(f"eager_nccl_all_reduce: parallel_conf must be a str, got {type(parallel_conf).__name__}")
    if _is_global(x):
        from .. import sbp
        return x.to_global(sbp=sbp.broadcast)
    return x.clone()


def distributed_partial_fc_sample(weight, label, num_sample, name=None):
    """Partial FC's class sampling: ``num_sample`` classes -- every class among ``label`` first, then
    others drawn at random -- and (mapped_label: each label's index among the sampled classes,
    sampled_label: the sampled class ids, sampled_weight: their rows of ``weight``)."""
    from .. import int64, tensor
    n_cls = int(weight.shape[0])
    if not 0 < num_sample <= n_cls:
        raise ValueError(f"distributed_partial_fc_sample: num_sample must be in [1, {n_cls}], got {num_sample}")
    lab = label.cpu().numpy().astype(np.int64).reshape(-1)
    if lab.size and (lab.min() < 0 or lab.max() >= n_cls):
        raise IndexError(f"distributed_partial_fc_sample: labels must be in [0, {n_cls}), got {lab.min()}..{lab.max()}")
    positive = list(dict.fromkeys(lab.tolist()))
    if len(positive) > num_sample:
        raise ValueError(f"distributed_partial_fc_sample: {len(positive)} distinct labels, more than num_sample={num_sample}")
    rest = np.setdiff1d(np.arange(n_cls), positive)
    from .. import randperm
    drawn = rest[randperm(len(rest)).numpy()[:num_sample - len(positive)]] if len(rest) else rest
    sampled = np.concatenate([np.array(positive, np.int64), drawn.astype(np.int64)])
    index = {c: i for i, c in enumerate(sampled.tolist())}
    mapped = np.array([index[c] for c in lab.tolist()], np.int64).reshape(tuple(label.shape))
    sampled_t = tensor(sampled, dtype=int64, device=weight.device)
    return (tensor(mapped, dtype=label.dtype, device=label.device), sampled_t, weight[sampled_t])


NAMES = ["parallel_cast", "hierarchical_parallel_cast", "cast_to_current_logical_view", "eager_nccl_all_reduce",
         "distributed_partial_fc_sample"]
