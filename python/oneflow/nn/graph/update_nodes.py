"""Optimizer updates as nodes of a training graph's program (docs/graph.md, "The update as
nodes").

With ``graph.config.allow_fuse_model_update_ops`` on (the default) and the
backward of a training graph as nodes of its program (Note [Backward nodes], src/graph/lazy.h),
the update the optimizer's ``step()`` would make in Python is recorded at the
end of the program as the optimizer's own fused multi-tensor op (``sgd_update``,
``adam_update``: the ops ``step()`` calls), reading each parameter's gradient from the slot the
traced backward computed. The options a scheduler (or the user) may change between calls --
the learning rate, momentum, betas, eps, weight decay -- are *scalar inputs* of the node (Note
[Scalar inputs]): 0-dim float64 tensors set from the param groups before each run, so an LR
scheduler works without tracing again. Options that change the shape of the update (momentum
on or off, Nesterov, AMSGrad, maximize, ...) and the parameter lists are checked on each call:
a change traces again.

Optimizers without a node form step in Python after the program, as before: other optimizer
classes (or an SGD / Adam subclass overriding ``step`` or its update), SGD with dampening (its
first step, on fresh momentum buffers, differs from the later ones), gradient clipping in a
param group, sparse parameters, a grad scaler (its step checks the gradients for inf / NaN
first), gradient accumulation (the program runs once per micro-batch, the update once a call),
and a backward that is not nodes.
"""
import contextlib

from ... import _oneflow_internal as _C
from ..._grad_mode import no_grad


def _sgd_form(opt):
    from ...optim.sgd import SGD
    if type(opt)._update_group is not SGD._update_group:
        return None
    if any(float(g["dampening"]) != 0.0 for g in opt.param_groups):
        return None
    return _SGD


def _adam_form(opt):
    from ...optim.adam import Adam
    if type(opt)._update_group is not Adam._update_group:  # (AdamW: Adam's update, decoupled decay)
        return None
    return _Adam


class _Kind:
    """How one optimizer class's update becomes a node: its op, the group options read per run
    (name in the op, key in the group, index into a tuple option or None), the structural
    options, and the state lists it updates."""

    op = None
    scalars = ()

    @staticmethod
    def structure(group):
        raise NotImplementedError

    @staticmethod
    def record(opt, group, params, grads):
        raise NotImplementedError


class _SGD(_Kind):
    op = "sgd_update"

    @staticmethod
    def structure(group):
        return (float(group["momentum"]) == 0.0, float(group["dampening"]) == 0.0, bool(group["nesterov"]),
                bool(group["maximize"]))

    @staticmethod
    def scalars_of(group):
        out = [("lr", "lr", None), ("weight_decay", "weight_decay", None)]
        if float(group["momentum"]) != 0.0:
            out.append(("momentum", "momentum", None))
        return out

    @staticmethod
    def state(opt, group, params):
        """The state tensors the node captures (made now, as the first eager step makes them:
        zero momentum buffers, updated with dampening 0 -- which is why dampening must be 0)."""
        if float(group["momentum"]) == 0.0:
            return {}
        bufs = []
        for p in params:
            st = opt.state[p]
            if st.get("momentum_buffer") is None:
                st["momentum_buffer"] = _C.zeros_like(p)
            bufs.append(st["momentum_buffer"])
        return {"momentum_buffer": bufs}

    @staticmethod
    def record(opt, group, params, grads, state):
        return _C.sgd_update(params, grads, state.get("momentum_buffer", []), lr=float(group["lr"]),
                             momentum=float(group["momentum"]), dampening=0.0,
                             weight_decay=float(group["weight_decay"]), nesterov=bool(group["nesterov"]),
                             maximize=bool(group["maximize"]))


class _Adam(_Kind):
    op = "adam_update"

    @staticmethod
    def structure(group):
        return (bool(group["amsgrad"]), bool(group["maximize"]), bool(group.get("decoupled_weight_decay")),
                bool(group.get("do_bias_correction", True)))

    @staticmethod
    def scalars_of(group):
        return [("lr", "lr", None), ("beta1", "betas", 0), ("beta2", "betas", 1), ("eps", "eps", None),
                ("weight_decay", "weight_decay", None)]

    @staticmethod
    def state(opt, group, params):
        keys = ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if group["amsgrad"] else [])
        steps, lists = opt._state_lists(params, keys)
        return dict(zip(keys, lists), step=steps)

    @staticmethod
    def record(opt, group, params, grads, state):
        amsgrad = bool(group["amsgrad"])
        return _C.adam_update(params, grads, state["exp_avg"], state["exp_avg_sq"],
                              state["max_exp_avg_sq"] if amsgrad else [], state["step"], amsgrad=amsgrad,
                              maximize=bool(group["maximize"]),
                              decoupled_weight_decay=bool(group.get("decoupled_weight_decay", False)),
                              do_bias_correction=bool(group.get("do_bias_correction", True)),
                              lr=float(group["lr"]), beta1=float(group["betas"][0]),
                              beta2=float(group["betas"][1]), eps=float(group["eps"]),
                              weight_decay=float(group["weight_decay"]))


_FORMS = (_sgd_form, _adam_form)


def _option(group, key, index):
    v = group[key]
    v = float(v if index is None else v[index])
    return v * float(group.get("lr_scale", 1.0)) if key == "lr" else v


@contextlib.contextmanager
def lr_scaled(opt):
    """OneFlow's `lr_scale` of a param group: a graph's update of the group's parameters uses
    `lr * lr_scale` (the nodes read it through `_option`; an update that steps in Python runs
    inside this, each group's lr scaled and put back after). Eager `step()` ignores it, as
    OneFlow's eager optimizers do."""
    saved = [(g, g["lr"]) for g in opt.param_groups if float(g.get("lr_scale", 1.0)) != 1.0]
    for g, lr in saved:
        g["lr"] = lr * float(g["lr_scale"])
    try:
        yield
    finally:
        for g, lr in saved:
            g["lr"] = lr


class UpdateNodes:
    """The update nodes of one optimizer in one program: the scalar inputs to set before each run
    (set_inputs) and what the nodes were traced with (stale)."""

    def __init__(self, opt, kind):
        self.opt, self.kind = opt, kind
        self.scalars = []    # [tensor, group, key, index, value last set]
        self.state = []      # (parameter, key, the state tensor the node captured)
        self.structure = self._structure()

    def _structure(self):
        return tuple((id(g["params"]), len(g["params"]), self.kind.structure(g)) for g in self.opt.param_groups)

    def stale(self):
        """The optimizer no longer matches the traced update (its options' shape or parameter
        lists changed): the program must be traced again."""
        return self._structure() != self.structure

    def set_inputs(self):
        """Before a run: each scalar input from its group option, and state the optimizer
        replaced (load_state_dict) copied back into the tensors the program captured."""
        for s in self.scalars:
            v = _option(s[1], s[2], s[3])
            if v != s[4]:
                s[0].fill_(v)
                s[4] = v
        state = self.opt.state  # (load_state_dict replaces it, and the per-parameter dicts)
        for p, key, t in self.state:
            d = state[p]
            cur = d.get(key)
            if cur is not t:
                if isinstance(cur, _C.Tensor):
                    t.copy_(cur)
                elif cur is not None:  # (a step count kept as a number: older checkpoints)
                    t.fill_(float(cur))
                d[key] = t


def record_updates(trace, optimizers):
    """Records each optimizer's update (one node per param group) at the end of the trace, where
    it has a node form; their UpdateNodes (the others step in Python). Call with the trace
    active, after build() called backward()."""
    tracer = trace.tracer
    out = []
    for opt in optimizers:
        kind = _form(opt)
        if kind is None:
            continue
        groups = []
        tracer.end()  # (the state and the scalar inputs are made for real, not recorded)
        try:
            for g in opt.param_groups:
                params = [p for p in g["params"] if tracer.traced_grad(p) is not None]
                if params:
                    scalars = [[_C.full((), _option(g, key, index), dtype=_C.float64), g, key, index,
                                _option(g, key, index), name] for name, key, index in kind.scalars_of(g)]
                    groups.append((g, params, kind.state(opt, g, params), scalars))
        finally:
            tracer.begin()
        nodes = UpdateNodes(opt, kind)
        for g, params, state, scalars in groups:
            with no_grad():  # (as step() updates)
                # (contiguous, as AccumulateGrad stores a .grad: a gradient made as a strided
                # view would be read with strides, slowly. A Linear's weight gradient is made
                # contiguous by its formula, Note [Weight-gradient layout] in
                # autograd/formulas.cpp: then this records no copy and the pass removes it)
                grads = [tracer.traced_grad(p).contiguous() for p in params]
                kind.record(opt, g, params, grads, state)
            for s in scalars:
                tracer.scalar_input(s.pop(), s[0])
                nodes.scalars.append(s)
            for key, tensors in state.items():
                nodes.state.extend((p, key, t) for p, t in zip(params, tensors))
        out.append(nodes)
    return out


def _form(opt):
    """opt's node form (a _Kind), or None: it steps in Python."""
    if type(opt).step is not _base_step():
        return None
    if opt._grads_clipped or any("clip_grad_max_norm" in g for g in opt.param_groups):
        return None
    if any(getattr(p, "_sparse_rows", None) is not None or getattr(p, "is_global", False)
           for g in opt.param_groups for p in g["params"]):
        return None
    for form in _FORMS:
        kind = form(opt)
        if kind is not None:
            return kind
    return None


def _base_step():
    from ...optim.optimizer import Optimizer
    return Optimizer.step
