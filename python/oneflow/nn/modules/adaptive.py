"""AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation for GPUs"), as
torch.nn's: the frequent classes (below cutoffs[0]) and one token per tail cluster share a head
softmax; each tail cluster has its own softmax behind a low-rank projection whose width shrinks
by div_value per cluster. forward returns (log-probability of each target, mean NLL)."""
from collections import namedtuple

from ... import _oneflow_internal as _C
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > (n_classes - 1)
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = dict(device=device, dtype=dtype)
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, size, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input, target):
        if target.dim() == 1:
            if input.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with size",
                                   tuple(input.shape))
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with size",
                                   tuple(input.shape))
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target.dim() > 0
        x = input if batched else input.unsqueeze(0)
        t = target if batched else target.unsqueeze(0)
        if t.numel() and (int(t.min()) < 0 or int(t.max()) >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{int(t.min())}, {int(t.max())}] were found. ")
        head_target = t
        tail_logp = _C.zeros(t.shape[0], dtype=x.dtype, device=x.device)
        for i in range(1, self.n_clusters + 1):
            low, high = self.cutoffs[i - 1], self.cutoffs[i]
            mask = (t >= low) & (t < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            head_target = _C.where(mask, _C.full_like(t, self.shortlist_size + i - 1), head_target)
            logp = F.log_softmax(self.tail[i - 1](x.index_select(0, rows)), dim=1)
            picked = logp.gather(1, (t.index_select(0, rows) - low).unsqueeze(1)).squeeze(1)
            tail_logp = tail_logp.scatter(0, rows, picked)
        head_logp = F.log_softmax(self.head(x), dim=1).gather(1, head_target.unsqueeze(1)).squeeze(1)
        output = head_logp + tail_logp
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, x, head_output):
        head_logp = F.log_softmax(head_output, dim=1)
        parts = [head_logp[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](x), dim=1)
            parts.append(cluster + head_logp[:, self.shortlist_size + i].unsqueeze(1))
        return _C.cat(parts, 1)

    def log_prob(self, input):
        """log-probabilities of every class: (N, n_classes) (or (n_classes,) unbatched)."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row (the full log-probabilities' argmax)."""
        return self.log_prob(input).argmax(-1)


__all__ = ["AdaptiveLogSoftmaxWithLoss"]
