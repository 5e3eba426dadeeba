"""ZeroRedundancyOptimizer (PyTorch's, ZeRO stage 1): every process keeps the optimizer state of
its share of the parameters only. The parameters of each group are dealt out greedily, largest
first, to the rank holding the fewest elements so far (the same partition in every process);
step() runs a local optimizer of optimizer_class on this rank's share, then each parameter is
broadcast from its owner. The gradients must already be averaged (DDP). The full state dict is
gathered on one rank by consolidate_state_dict(to). It is a Joinable: in a process that ran out
of inputs, Join steps it each iteration the others still train (its share updated with the
averaged gradients DDP's join hook left in .grad, then the broadcasts the others wait for)."""
import oneflow as flow

from .. import _collectives, _pg
from ...optim.optimizer import Optimizer
from ..algorithms.join import Join, JoinHook, Joinable


class _ZeROJoinHook(JoinHook):
    def __init__(self, zero):
        self.zero = zero

    def main_hook(self):
        """The step of an iteration this process has no input for: its share and the broadcasts."""
        self.zero.step()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view=False,
                 overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer: overlap_with_ddp is not supported")
        super().__init__(params, defaults)
        self._optim_class, self.process_group = optimizer_class, process_group
        self.world_size = _pg.get_world_size(process_group)
        self.rank = _pg.get_rank(process_group)
        self.global_rank = _pg.get_rank()
        self._ranks = _pg.get_process_group_ranks(process_group) if process_group is not None else \
            list(range(self.world_size))
        self._consolidated = None
        self._build_local()

    # -- partition ------------------------------------------------------------------------------
    def _partition(self):
        """owner[id(param)] = group rank, for every parameter of every group."""
        owner = {}
        for group in self.param_groups:
            sizes = [0] * self.world_size
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                r = min(range(self.world_size), key=lambda i: sizes[i])
                owner[id(p)] = r
                sizes[r] += p.numel()
        return owner

    def _build_local(self):
        self._owner = self._partition()
        groups = []
        for group in self.param_groups:
            mine = [p for p in group["params"] if self._owner[id(p)] == self.rank]
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": mine})
        kept = [g for g in groups if g["params"]]
        # (a rank owning nothing still needs an optimizer object: one with no parameters at all)
        self.optim = self._optim_class(kept, **self.defaults) if kept else None
        self._local_groups = groups

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        if hasattr(self, "_optim_class"):
            self._build_local()

    def _sync_options(self):
        """The options of the public param groups (an LR scheduler writes there) into the local ones."""
        if self.optim is None:
            return
        local = iter(self.optim.param_groups)
        for group, lgroup in zip(self.param_groups, self._local_groups):
            if not lgroup["params"]:
                continue
            target = next(local)
            for k, v in group.items():
                if k != "params":
                    target[k] = v

    # -- step -----------------------------------------------------------------------------------
    def step(self, closure=None):
        Join.notify_join_context(self)  # (counts the processes still training if it is Join's first)
        loss = None
        if closure is not None:
            with flow.enable_grad():
                loss = closure()
        self._sync_options()
        if self.optim is not None:
            self.optim.step()
        with flow.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    _collectives.broadcast(p.data, self._ranks[self._owner[id(p)]], group=self.process_group)
        return loss

    # -- Joinable (algorithms.join) -------------------------------------------------------------
    def join_hook(self, **kwargs):
        return _ZeROJoinHook(self)

    @property
    def join_device(self):
        return self.param_groups[0]["params"][0].device

    @property
    def join_process_group(self):
        return self.process_group

    # -- state ----------------------------------------------------------------------------------
    def _global_index(self):
        index, i = {}, 0
        for group in self.param_groups:
            for p in group["params"]:
                if id(p) not in index:
                    index[id(p)] = i
                    i += 1
        return index

    def consolidate_state_dict(self, to=0):
        """Gathers every rank's optimizer state on rank `to` (a collective: every rank calls it)."""
        index = self._global_index()
        mine = {}
        if self.optim is not None:
            for p, st in self.optim.state.items():
                mine[index[id(p)]] = {k: (v.cpu() if isinstance(v, flow.Tensor) else v) for k, v in st.items()}
        gathered = [None] * self.world_size
        _collectives.all_gather_object(gathered, mine, group=self.process_group)
        if self.global_rank == to:
            merged = {}
            for part in gathered:
                merged.update(part)
            self._consolidated = merged
        else:
            self._consolidated = None

    def state_dict(self):
        """The whole optimizer's state, in the usual layout; on the rank given to
        consolidate_state_dict, after calling it."""
        if self._consolidated is None:
            raise RuntimeError(f"Optimizer state has not been consolidated on this rank (rank {self.global_rank}). "
                               "Please call `consolidate_state_dict(to=...)` on all ranks beforehand and call "
                               "`state_dict()` on the target rank instead.")
        index = self._global_index()
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        return {"state": dict(self._consolidated), "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Loads a full state dict (from state_dict()): every rank keeps its own parameters' state."""
        super().load_state_dict(state_dict)
        self._build_local()
        if self.optim is not None:
            index = self._global_index()
            local = {"state": {}, "param_groups": []}
            order = []
            for lgroup in self._local_groups:
                if not lgroup["params"]:
                    continue
                ids = [index[id(p)] for p in lgroup["params"]]
                order.append(ids)
                local["param_groups"].append({**{k: v for k, v in lgroup.items() if k != "params"}, "params": ids})
            saved = state_dict["state"]
            local["state"] = {i: saved[i] for ids in order for i in ids if i in saved}
            self.optim.load_state_dict(local)
        self.state.clear()  # (the public object keeps no state of its own: it lives in self.optim)
        self._consolidated = None
