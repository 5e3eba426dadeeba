"""One LSTM layer and direction as one autograd.Function, forward and backward written out:
the input projection of all steps, the recurrence, and their gradients.

Why not plain autograd over the step ops: each step would record ~12 nodes, its W_hh gradient
would be one small matmul plus one accumulation per step, and sigmoid's and tanh's generated
backward formulas run three kernels each. Here the backward of a step is a dozen pointwise ops on
the saved gate activations plus one matmul for dh; the weight gradients are one matmul each over
all steps after the loop (dW_hh = dG^T H_prev, dW_ih = dG^T X, dW_hr = dH^T (o * tanh c)), as
cuDNN and oneDNN do.

Activations: the sigmoid gates use the tanh kernel too:
sigmoid(x) = 1/2 + tanh(x/2)/2, so the gate pre-activations are computed at scale alpha = 1/2
for i, f, o and 1 for g (exact: a power of two) by scaling the weights (or the gates), and one
tanh over the whole gate matrix gives every gate after act = beta + alpha * tanh (beta = 1/2, 0
for g). Gate order i, f, g, o (PyTorch's).

Rows: padded and packed batches share the schedule of `_rnn_steps.run_direction`: step t has
alive[t] rows (non-increasing in t); x, the gates and the output hold the rows of all steps
time-major.
"""
from ... import _oneflow_internal as _C
from ...autograd import Function
from . import _rnn_steps

_CONSTS = {}


def _consts(hidden, like):
    """(alpha, beta, u, v, ones): over the 4H gate columns act = beta + alpha * tanh(alpha * x)
    and the activation derivative act * (u - act) + v (sigmoid: a (1 - a); tanh: 1 - a^2);
    ones over H columns (a row, not one element: broadcasting a row keeps loops vectorised)."""
    key = (hidden, like.dtype, str(like.device))
    if key not in _CONSTS:
        import oneflow as flow

        def cols(*vals):
            return flow.cat([flow.full((hidden,), v, dtype=like.dtype, device=like.device)
                             for v in vals])
        _CONSTS[key] = (cols(0.5, 0.5, 1, 0.5), cols(0.5, 0.5, 0, 0.5), cols(1, 1, 0, 1),
                        cols(0, 0, 1, 0), cols(1))
    return _CONSTS[key]


def _scan(x2d, w_ih, b_ih, b_hh, h0, c0, w_hh, w_hr, alive, reverse, saved=None):
    """The forward pass, without autograd. Returns (output rows (N, P), h_n, c_n); fills
    `saved` (a dict of per-step lists) for the backward when given."""
    hidden = w_hh._shape[0] // 4
    alpha, beta = _consts(hidden, w_hh)[:2]
    bias = None if b_ih is None else b_ih + b_hh
    # The alpha scaling: of the weights (their transposes made contiguous on the way, which
    # OpenBLAS runs a little faster) when they are smaller than the gate matrices of all steps,
    # else of each step's gate matrix.
    if x2d._shape[0] > w_ih._shape[1] + w_hh._shape[1]:
        ih_t, hh_t, post = w_ih.t() * alpha, w_hh.t() * alpha, None  # contiguous results
        bias = None if bias is None else bias * alpha
    else:
        ih_t, hh_t, post = w_ih.t(), w_hh.t(), alpha
    gi = _C.mm(x2d, ih_t) if bias is None else _C.addmm(bias, x2d, ih_t)
    gates = _rnn_steps.split_rows(gi, alive)
    hr_t = None if w_hr is None else w_hr.t()
    steps = len(alive)
    rec = {k: [None] * steps for k in ("act", "tc", "h_prev", "c_prev", "hh")}

    def step(t, s, state):
        h, c = state
        if h is not None:
            s = _C.addmm(s, h, hh_t)
        if post is not None:
            s.mul_(post)
        act = _C.addcmul(beta, _C.tanh_(s), alpha)  # s: this step's own block
        i, f, g, o = act.chunk(4, 1)
        c_new = i * g if c is None else _C.addcmul(f * c, i, g)
        tc = _C.tanh(c_new)
        hh = o * tc
        rec["act"][t], rec["tc"][t] = act, tc
        rec["h_prev"][t], rec["c_prev"][t] = h, c
        if hr_t is None:
            return hh, c_new
        rec["hh"][t] = hh  # for dW_hr
        return _C.mm(hh, hr_t), c_new

    def zero_state():
        import oneflow as flow
        size = hidden if w_hr is None else w_hr._shape[0]
        return (flow.zeros(alive[0], size, dtype=x2d.dtype, device=x2d.device),
                flow.zeros(alive[0], hidden, dtype=x2d.dtype, device=x2d.device))

    outs, (h_n, c_n) = _rnn_steps.run_direction(step, gates, alive, (h0, c0), reverse, zero_state)
    if saved is not None:
        saved.update(rec)
    return _C.cat(outs, 0), h_n, c_n


class LSTMScan(Function):
    """(x2d, w_ih, b_ih, b_hh, h0, c0, w_hh, w_hr, alive, reverse) -> (output rows, h_n, c_n);
    biases None = no bias, h0/c0 None = zeros, w_hr None = no projection.

    The per-step tensors go through save_for_backward, not ctx attributes: the graph node then
    owns them (version-checked, freed after backward unless retain_graph), and ctx, which the
    node's closure keeps, holds no tensor that could close a cycle through C++ with an output
    (Python's GC cannot see such cycles)."""

    _KEYS = ("act", "tc", "h_prev", "c_prev", "hh")

    @staticmethod
    def forward(ctx, x2d, w_ih, b_ih, b_hh, h0, c0, w_hh, w_hr, alive, reverse):
        rec = {}
        out = _scan(x2d, w_ih, b_ih, b_hh, h0, c0, w_hh, w_hr, alive, reverse, rec)
        # Saved through the graph node (freed after backward unless retain_graph, as usual),
        # which takes tensors only: None entries are restored from `present`.
        flat = [x2d, w_ih, b_ih, b_hh, h0, c0, w_hh, w_hr]
        flat += [t for k in LSTMScan._KEYS for t in rec[k]]
        ctx.present = [t is not None for t in flat]
        ctx.save_for_backward(*(t for t in flat if t is not None))
        ctx.alive, ctx.reverse = alive, reverse
        return out

    @staticmethod
    def backward(ctx, d_out, d_hn, d_cn):
        it = iter(ctx.saved_tensors)
        saved = [next(it) if p else None for p in ctx.present]
        alive, reverse = ctx.alive, ctx.reverse
        if _C.is_grad_enabled():  # create_graph: the gradients must be differentiable
            return _recorded_backward(saved[:8], alive, reverse, (d_out, d_hn, d_cn))
        x2d, w_ih, w_hh, w_hr = saved[0], saved[1], saved[6], saved[7]
        steps = len(alive)
        rec = {k: saved[8 + j * steps:8 + (j + 1) * steps] for j, k in enumerate(LSTMScan._KEYS)}
        needs = ctx.needs_input_grad
        _, _, u, v, ones = _consts(w_hh._shape[0] // 4, d_out)
        d_outs = _rnn_steps.split_rows(d_out, alive)
        dpre, dh_all = [None] * steps, [None] * steps
        need_h0 = needs[4] or needs[5]
        first = steps - 1 if reverse else 0  # the step that read the initial state

        def step(t, carry):
            """Gradients of step t's inputs from those of its outputs (carry = (dh, dc))."""
            dh = d_outs[t] + carry[0]
            dh_all[t] = dh
            act, tc, c_prev = rec["act"][t], rec["tc"][t], rec["c_prev"][t]
            i, f, g, o = act.chunk(4, 1)
            dhh = dh if w_hr is None else _C.mm(dh, w_hr)
            dc = _C.addcmul(carry[1], dhh * o, _C.addcmul(ones, tc, tc, value=-1))  # tanh'
            df = _zeros_like(dc) if c_prev is None else dc * c_prev
            d = _C.cat([dc * g, df, dc * i, dhh * tc], 1)
            d.mul_(_C.addcmul(v, act, u - act))  # through the activations
            dpre[t] = d
            if t == first and (rec["h_prev"][t] is None or not need_h0):
                return None
            return _C.mm(d, w_hh), dc * f

        dh0, dc0 = _rnn_steps.backward_schedule(step, alive, reverse, (d_hn, d_cn)) or (None, None)
        d_gates = _C.cat(dpre, 0)
        dx = _C.mm(d_gates, w_ih) if needs[0] else None
        d_w_ih = _C.mm(d_gates.t(), x2d) if needs[1] else None
        d_bias = d_gates.sum(0) if needs[2] or needs[3] else None
        d_w_hh = None
        if needs[6]:
            d_w_hh = _rnn_steps.recurrent_weight_grad(d_gates, rec["h_prev"], alive, first)
        d_w_hr = None
        if w_hr is not None and needs[7]:
            d_w_hr = _C.mm(_C.cat(dh_all, 0).t(), _C.cat(rec["hh"], 0))
        d_bias2 = None if d_bias is None else d_bias.clone()  # b_ih and b_hh: two grads
        return dx, d_w_ih, d_bias, d_bias2, dh0, dc0, d_w_hh, d_w_hr, None, None


def _recorded_backward(inputs, alive, reverse, grads):
    """The gradients as differentiable tensors (backward with create_graph=True): the forward
    is recomputed with recorded ops (the sigmoid and tanh ops, whose own backward formulas are
    differentiable) and differentiated by autograd.grad."""
    import oneflow as flow
    x2d, w_ih, b_ih, b_hh, h0, c0, w_hh, w_hr = inputs
    hh_t, hr_t = w_hh.t(), None if w_hr is None else w_hr.t()

    def step(t, gi, state):
        h, c = state
        i, f, g, o = (gi if h is None else _C.addmm(gi, h, hh_t)).chunk(4, 1)
        i, g = i.sigmoid(), g.tanh()
        c = i * g if c is None else _C.addcmul(f.sigmoid() * c, i, g)
        h = o.sigmoid() * c.tanh()
        return (h if hr_t is None else _C.mm(h, hr_t)), c

    def zero_state():
        size = w_hh._shape[1]
        return (flow.zeros(alive[0], size, dtype=x2d.dtype, device=x2d.device),
                flow.zeros(alive[0], w_hh._shape[0] // 4, dtype=x2d.dtype, device=x2d.device))

    with flow.enable_grad():
        gi = _rnn_steps.input_projection(x2d, w_ih, None if b_ih is None else b_ih + b_hh)
        outs, (h_n, c_n) = _rnn_steps.run_direction(step, _rnn_steps.split_rows(gi, alive), alive,
                                                   (h0, c0), reverse, zero_state)
        wanted = [k for k, t in enumerate(inputs) if t is not None and t.requires_grad]
        got = flow.autograd.grad((_C.cat(outs, 0), h_n, c_n), [inputs[k] for k in wanted],
                                 grads, create_graph=True, allow_unused=True)
    result = [None] * 10
    for k, g in zip(wanted, got):
        result[k] = g
    return tuple(result)


def _zeros_like(t):
    import oneflow as flow
    return flow.zeros_like(t)


def lstm_layer(x2d, w_ih, b_ih, b_hh, h0, c0, w_hh, w_hr, alive, reverse):
    """One layer-direction: with autograd when anything needs a gradient, else the plain loop."""
    args = (x2d, w_ih, b_ih, b_hh, h0, c0, w_hh, w_hr)
    if _C.is_grad_enabled() and any(t is not None and t.requires_grad for t in args):
        return LSTMScan.apply(*args, alive, reverse)
    return _scan(*args, alive, reverse)
