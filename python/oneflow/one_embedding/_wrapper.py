"""`flow.one_embedding.Optimizer`, upstream's eager wrapper around an optimizer that steps
embedding tables (apart from _optim.py, which _embedding.py uses: no import circle)."""
from ..optim.optimizer import Optimizer as _Optimizer
from ._embedding import Embedding


class Optimizer(_Optimizer):
    """Upstream's eager wrapper: ``flow.one_embedding.Optimizer(opt, embeddings=[...])``. The
    tables' sparse updates run inside ``opt.step()`` here (Note [Sparse parameters]), so this
    checks that each embedding is in ``opt`` and otherwise forwards to it."""

    def __init__(self, optimizer, embeddings):
        if not isinstance(optimizer, _Optimizer):
            raise TypeError(f"one_embedding.Optimizer: expected an optimizer, got {type(optimizer).__name__}")
        params = {id(p) for g in optimizer.param_groups for p in g["params"]}
        for e in embeddings:
            if not isinstance(e, Embedding):
                raise TypeError(f"one_embedding.Optimizer: embeddings must be one_embedding tables, "
                                f"got {type(e).__name__}")
            if id(e.shadow) not in params:
                raise ValueError(f"one_embedding.Optimizer: the embedding {e.embedding_name!r} is "
                                 "not in the optimizer's param groups")
        self.optimizer = optimizer
        self.embeddings = list(embeddings)
        self.defaults = optimizer.defaults
        self.state = optimizer.state
        self.param_groups = optimizer.param_groups

    def step(self, closure=None):
        return self.optimizer.step(closure)

    def zero_grad(self, set_to_none=True):
        self.optimizer.zero_grad(set_to_none)

    def state_dict(self):
        return self.optimizer.state_dict()

    def load_state_dict(self, state_dict):
        self.optimizer.load_state_dict(state_dict)
