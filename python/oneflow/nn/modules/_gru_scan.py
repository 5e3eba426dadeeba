"""One GRU layer and direction as one autograd.Function, forward and backward written out (the
reasons are those of `_lstm_scan.py`): the input projection of all steps, the recurrence
    r, z = sigmoid(gi_rz + gh_rz),  n = tanh(gi_n + r * gh_n),  h' = (1 - z) * n + z * h
with gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh (gate order r, z, n, PyTorch's), and their
gradients: per step a few pointwise ops plus one matmul for dh, then one matmul per weight
over all steps.

sigmoid(x) = 1/2 + tanh(x/2)/2 with the r and z rows of the weights and biases scaled by 1/2
(exact), as `_rnn_steps.gru_step`. The rows of all steps
are time-major, step t has alive[t] of them (`_rnn_steps.run_direction`).
"""
from ... import _oneflow_internal as _C
from ...autograd import Function
from . import _rnn_steps


def _scan(x2d, w_ih, b_ih, b_hh, h0, w_hh, alive, reverse, saved=None):
    """The forward pass, without autograd: (output rows (N, H), h_n); fills `saved` (a dict of
    per-step lists) for the backward when given."""
    import oneflow as flow
    hidden = w_hh._shape[0] // 3
    half, col = _rnn_steps.gru_scales(hidden, w_hh)
    if b_hh is None:
        b_hh = flow.zeros(3 * hidden, dtype=w_hh.dtype, device=w_hh.device)
    bh = b_hh * col  # also gh of a zero state
    # The scaling: of the weights (their transposes made contiguous on the way) when they are
    # smaller than the gate matrices of all steps, else of the gate matrices.
    if x2d._shape[0] > w_ih._shape[1] + w_hh._shape[1]:
        ih_t, hh_t, post = w_ih.t() * col, w_hh.t() * col, None
        bi = None if b_ih is None else b_ih * col
    else:
        ih_t, hh_t, post, bi = w_ih.t(), w_hh.t(), col, b_ih
    gi = _C.mm(x2d, ih_t) if bi is None else _C.addmm(bi, x2d, ih_t)
    if post is not None:
        gi.mul_(post)
    gi_rz, gi_n = gi.split([2 * hidden, hidden], 1)
    gates = list(zip(_rnn_steps.split_rows(gi_rz, alive), _rnn_steps.split_rows(gi_n, alive)))
    steps = len(alive)
    rec = {k: [None] * steps for k in ("rz", "n", "gh_n", "h_prev")}

    def step(t, gate, state):
        (g_rz, g_n), h = gate, state[0]
        if h is None:
            gh = bh
        else:
            gh = _C.addmm(bh if post is None else b_hh, h, hh_t)
            if post is not None:
                gh.mul_(post)
        gh_rz, gh_n = gh.split([2 * hidden, hidden], -1)
        rz = _C.addcmul(half, _C.tanh_(g_rz + gh_rz), half)
        r, z = rz.chunk(2, 1)
        n = _C.tanh_(_C.addcmul(g_n, r, gh_n))
        rec["rz"][t], rec["n"][t], rec["gh_n"][t], rec["h_prev"][t] = rz, n, gh_n, h
        if h is None:
            return (_C.addcmul(n, z, n, value=-1),)  # (1 - z) * n
        return (_C.lerp(n, h, z),)  # n + z * (h - n)

    def zero_state():
        return (flow.zeros(alive[0], hidden, dtype=x2d.dtype, device=x2d.device),)

    outs, (h_n,) = _rnn_steps.run_direction(step, gates, alive, (h0,), reverse, zero_state)
    if saved is not None:
        saved.update(rec)
    return _C.cat(outs, 0), h_n


class GRUScan(Function):
    """(x2d, w_ih, b_ih, b_hh, h0, w_hh, alive, reverse) -> (output rows, h_n); biases None =
    no bias, h0 None = zeros. Saved tensors as in _lstm_scan.LSTMScan."""

    _KEYS = ("rz", "n", "gh_n", "h_prev")

    @staticmethod
    def forward(ctx, x2d, w_ih, b_ih, b_hh, h0, w_hh, alive, reverse):
        rec = {}
        out = _scan(x2d, w_ih, b_ih, b_hh, h0, w_hh, alive, reverse, rec)
        flat = [x2d, w_ih, b_ih, b_hh, h0, w_hh] + [t for k in GRUScan._KEYS for t in rec[k]]
        ctx.present = [t is not None for t in flat]
        ctx.save_for_backward(*(t for t in flat if t is not None))
        ctx.alive, ctx.reverse = alive, reverse
        return out

    @staticmethod
    def backward(ctx, d_out, d_hn):
        it = iter(ctx.saved_tensors)
        saved = [next(it) if p else None for p in ctx.present]
        alive, reverse = ctx.alive, ctx.reverse
        if _C.is_grad_enabled():  # create_graph: the gradients must be differentiable
            return _recorded_backward(saved[:6], alive, reverse, (d_out, d_hn))
        x2d, w_ih, w_hh = saved[0], saved[1], saved[5]
        steps = len(alive)
        rec = {k: saved[6 + j * steps:6 + (j + 1) * steps] for j, k in enumerate(GRUScan._KEYS)}
        needs = ctx.needs_input_grad
        ones = _rnn_steps.gru_scales(w_hh._shape[0] // 3, w_hh)[1][-(w_hh._shape[0] // 3):]
        d_outs = _rnn_steps.split_rows(d_out, alive)
        d_gi, d_gh = [None] * steps, [None] * steps
        first = steps - 1 if reverse else 0  # the step that read the initial state

        def step(t, carry):
            dh = d_outs[t] + carry[0]
            rz, n, gh_n, h_prev = rec["rz"][t], rec["n"][t], rec["gh_n"][t], rec["h_prev"][t]
            r, z = rz.chunk(2, 1)
            dhz = dh * z
            dz = (dh * n).neg_() if h_prev is None else dh * (h_prev - n)
            dn_pre = (dh - dhz).mul_(_C.addcmul(ones, n, n, value=-1))  # dh (1 - z) tanh'
            d_rz = _C.cat([dn_pre * gh_n, dz], 1).mul_(_C.addcmul(rz, rz, rz, value=-1))
            d_gi[t] = _C.cat([d_rz, dn_pre], 1)
            d_gh[t] = _C.cat([d_rz, dn_pre * r], 1)
            if t == first and (h_prev is None or not needs[4]):
                return None
            return (_C.addmm(dhz, d_gh[t], w_hh),)

        dh0 = _rnn_steps.backward_schedule(step, alive, reverse, (d_hn,))
        dgi, dgh = _C.cat(d_gi, 0), _C.cat(d_gh, 0)
        dx = _C.mm(dgi, w_ih) if needs[0] else None
        d_w_ih = _C.mm(dgi.t(), x2d) if needs[1] else None
        d_b_ih = dgi.sum(0) if needs[2] else None
        d_b_hh = dgh.sum(0) if needs[3] else None
        d_w_hh = None
        if needs[5]:
            d_w_hh = _rnn_steps.recurrent_weight_grad(dgh, rec["h_prev"], alive, first)
        return dx, d_w_ih, d_b_ih, d_b_hh, None if dh0 is None else dh0[0], d_w_hh, None, None


def _recorded_backward(inputs, alive, reverse, grads):
    """Differentiable gradients (backward with create_graph=True): the forward recomputed with
    recorded ops (`_rnn_steps.gru_step`), differentiated by autograd.grad."""
    import oneflow as flow
    x2d, w_ih, b_ih, b_hh, h0, w_hh = inputs
    with flow.enable_grad():
        w = _rnn_steps.Weights("GRU", w_ih, w_hh, b_ih, b_hh, None).scaled_for_gru_step()
        gi = _rnn_steps.input_projection(x2d, w.w_ih, w.in_bias)

        def zero_state():
            return (flow.zeros(alive[0], w.hidden, dtype=x2d.dtype, device=x2d.device),)
        outs, (h_n,) = _rnn_steps.run_direction(
            lambda t, g, s: _rnn_steps.gru_step(g, s, w), _rnn_steps.gate_steps("GRU", gi, w, alive),
            alive, (h0,), reverse, zero_state)
        wanted = [k for k, t in enumerate(inputs) if t is not None and t.requires_grad]
        got = flow.autograd.grad((_C.cat(outs, 0), h_n), [inputs[k] for k in wanted], grads,
                                 create_graph=True, allow_unused=True)
    result = [None] * 8
    for k, g in zip(wanted, got):
        result[k] = g
    return tuple(result)


def gru_layer(x2d, w_ih, b_ih, b_hh, h0, w_hh, alive, reverse):
    """One layer-direction: with autograd when anything needs a gradient, else the plain loop."""
    args = (x2d, w_ih, b_ih, b_hh, h0, w_hh)
    if _C.is_grad_enabled() and any(t is not None and t.requires_grad for t in args):
        return GRUScan.apply(*args, alive, reverse)
    return _scan(*args, alive, reverse)
