"""The pieces of the recurrences behind nn.RNN / LSTM / GRU: the step functions, the weights of
one layer-direction arranged for the loop, and the loop's schedule over padded and packed batches
(forward `run_direction`, backward `backward_schedule`).

They sit below both users: `_rnn_impl.py` (layers and directions) and the autograd.Functions of
`_lstm_scan.py` / `_gru_scan.py`, which `_rnn_impl.py` calls; in one module with the layers they
made an import circle.

Padded and packed inputs share one loop: a padded batch is a packed one whose batch size never
changes. In a packed batch the sequences are sorted by decreasing length, so at step t only the
first batch_sizes[t] rows are alive: the forward direction drops the rows that ended (their final
state is kept), the reverse direction starts with the shortest batch and adds the rows of longer
sequences (taken from the initial state) as it walks back in time.

Note [Zero initial state]: when no initial state is given, the first step skips h W_hh^T (and
f * c for LSTM) instead of multiplying by zeros; the result is the same, bit for bit. Not when
that product is W_hh's only use and W_hh needs a gradient (one step, as in the cells): PyTorch
then gives W_hh a zero gradient, not None (it matters to weight decay and optimizer state).
"""
import oneflow as flow
from ... import _oneflow_internal as _C
from ..._global_hooks import placed_like


def input_projection(x2d, w_ih, bias):
    """x2d (N, I) @ W_ih^T + bias: the gate pre-activations of all rows at once."""
    if bias is None:
        return _C.mm(x2d, w_ih.t())
    return _C.addmm(bias, x2d, w_ih.t())


def zero_state_allowed(w_hh, steps):
    """Whether a None state may stand for zeros (Note [Zero initial state])."""
    return steps > 1 or not (w_hh.requires_grad and _C.is_grad_enabled())


# ---------------------------------------------------------------------------
# One step of RNN, and of GRU for its differentiable backward (recorded by autograd). `gi`
# holds x W_ih^T plus the biases that can be folded in (both for RNN; b_ih only for GRU, whose
# n gate needs r * (h W_hn^T + b_hn)); `state` is (h,), h None for a zero state (Note [Zero
# initial state]).


def rnn_tanh_step(gi, state, w):
    h = state[0]
    return (_C.tanh(gi if h is None else _C.addmm(gi, h, w.hh_t)),)


def rnn_relu_step(gi, state, w):
    h = state[0]
    return ((gi if h is None else _C.addmm(gi, h, w.hh_t)).relu(),)


def gru_step(gi, state, w):
    gi_rz, gi_n = gi
    h = state[0]
    if h is not None:
        gh = _C.mm(h, w.hh_t) if w.b_hh is None else _C.addmm(w.b_hh, h, w.hh_t)
    else:  # h W_hh^T = 0 (Note [Zero initial state])
        gh = w.b_hh if w.b_hh is not None else flow.zeros(
            3 * w.hidden, dtype=gi_n.dtype, **placed_like(gi_n))
    gh_rz, gh_n = gh.split([2 * w.hidden, w.hidden], -1)
    half = w.half
    # sigmoid(x) = 1/2 + tanh(x/2)/2; the r and z rows of the weights are pre-scaled by 1/2
    r, z = _C.addcmul(half, _C.tanh(gi_rz + gh_rz), half).chunk(2, 1)
    n = _C.tanh(_C.addcmul(gi_n, r, gh_n))
    if h is None:
        return (_C.addcmul(n, z, n, value=-1),)  # (1 - z) * n
    return (_C.lerp(n, h, z),)  # (1 - z) * n + z * h


_GRU_SCALES = {}


def gru_scales(hidden, like):
    """(1/2 over 2H columns, the row scales (1/2 for r and z, 1 for n) over 3H)."""
    where = placed_like(like)  # (a device, or a global tensor's placement and SBP)
    key = (hidden, like.dtype) + tuple((k, str(v)) for k, v in where.items())
    if key not in _GRU_SCALES:
        half = flow.full((2 * hidden,), 0.5, dtype=like.dtype, **where)
        one = flow.ones(hidden, dtype=like.dtype, **where)
        _GRU_SCALES[key] = (half, flow.cat([half, one]))
    return _GRU_SCALES[key]


STEPS = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step}


class Weights:
    """One layer-direction's parameters, arranged for the loop. LSTM and GRU take the
    parameters as they are (`_lstm_scan.py`, `_gru_scan.py`). For RNN, in_bias is what the
    input projection adds (b_ih + b_hh); gru_step's (for GRU's differentiable backward) is
    b_ih, GRU keeping b_hh for its n gate, with the r and z rows scaled by 1/2 (exactly: a
    power of two) for its sigmoid."""

    __slots__ = ("mode", "w_ih", "b_ih", "b_hh", "w_hh", "w_hr", "hidden", "in_bias", "hh_t",
                 "half")

    def __init__(self, mode, w_ih, w_hh, b_ih, b_hh, w_hr):
        self.mode, self.w_ih, self.b_ih, self.b_hh, self.w_hh, self.w_hr = (
            mode, w_ih, b_ih, b_hh, w_hh, w_hr)
        self.hidden = w_hh._shape[0] // {"LSTM": 4, "GRU": 3}.get(mode, 1)
        if mode == "RNN_TANH" or mode == "RNN_RELU":
            self.in_bias = None if b_ih is None else b_ih + b_hh
            self.hh_t = w_hh.t()

    def scaled_for_gru_step(self):
        """The GRU weights for gru_step (recorded ops): r and z rows scaled by 1/2."""
        self.half, col = gru_scales(self.hidden, self.w_hh)
        self.w_ih = self.w_ih * col.unsqueeze(1)
        self.in_bias, self.b_hh = (None if b is None else b * col for b in (self.b_ih, self.b_hh))
        self.hh_t = (self.w_hh * col.unsqueeze(1)).t()
        return self

    def state_sizes(self):
        if self.mode != "LSTM":
            return (self.hidden,)
        return (self.hidden if self.w_hr is None else self.w_hr._shape[0], self.hidden)


_SPLIT_MAX = 16  # split() returns at most this many pieces (its sizes are a DimVector)


def split_rows(t, sizes):
    """t split along dim 0 into pieces of the given sizes, as one differentiable split node per
    group (the backward is one cat per group), for any number of pieces. Not unbind: each of its
    pieces would get its own backward buffer of t's full size."""
    if len(sizes) <= _SPLIT_MAX:
        return list(t.split(list(sizes), 0))
    group = -(-len(sizes) // _SPLIT_MAX)
    groups = [sizes[i:i + group] for i in range(0, len(sizes), group)]
    parts = t.split([sum(g) for g in groups], 0)
    return [piece for part, g in zip(parts, groups) for piece in split_rows(part, g)]


def gate_steps(mode, gi, w, sizes):
    """Per-step row blocks of the projected input `gi`; GRU's are (rz, n) pairs."""
    if mode != "GRU":
        return split_rows(gi, sizes)
    rz, n = gi.split([2 * w.hidden, w.hidden], -1)
    return list(zip(split_rows(rz, sizes), split_rows(n, sizes)))


def run_direction(step, gates, alive, state0, reverse, zero_state):
    """Runs one direction: state = step(t, gates[t], state) over the steps in time order (or
    reversed); returns (per-step outputs state[0], final state).

    alive[t] rows are alive at step t (non-increasing in t). state0 is a tuple of full-batch
    tensors, or of None for a zero state; zero_state() makes the zeros when rows must be
    taken from it later (the reverse direction of a packed batch)."""
    steps = len(gates)
    outs = [None] * steps
    if not reverse:
        state, b, ended = state0, alive[0], []
        for t in range(steps):
            if alive[t] < b:  # sequences alive[t]..b-1 ended at t - 1: keep their final state
                ended.append([s.narrow(0, alive[t], b - alive[t]) for s in state])
                state = tuple(s.narrow(0, 0, alive[t]) for s in state)
                b = alive[t]
            state = step(t, gates[t], state)
            outs[t] = state[0]
        if ended:
            state = tuple(_C.cat([s] + [e[k] for e in reversed(ended)], 0)
                          for k, s in enumerate(state))
        return outs, state
    b = alive[-1]
    if b < alive[0]:  # the batch grows: initial rows are needed later
        if state0[0] is None:
            state0 = zero_state()
        state = tuple(s.narrow(0, 0, b) for s in state0)
    else:
        state = state0
    for t in range(steps - 1, -1, -1):
        if alive[t] > b:  # sequences b..alive[t]-1 start here (at their last step)
            state = tuple(_C.cat([s, s0.narrow(0, b, alive[t] - b)], 0)
                          for s, s0 in zip(state, state0))
            b = alive[t]
        state = step(t, gates[t], state)
        outs[t] = state[0]
    return outs, state


def backward_schedule(step, alive, reverse, finals):
    """The backward of run_direction's loop: carry = step(t, carry) over the steps in the
    opposite order, carry being the gradients of the state after step t; rows that the forward
    dropped (sequences that ended) or added (from the initial state) get theirs from `finals`
    (the final state's gradients) or go to the initial state's gradient, which is returned
    (None when the step function returns None for the step that read the initial state)."""
    steps = len(alive)
    if not reverse:
        # the forward dropped rows alive[t]..alive[t-1]-1 after step t-1: their final-state
        # gradients join the carry when the backward reaches step t - 1.
        b = alive[-1]
        carry = tuple(d.narrow(0, 0, b) for d in finals)
        for t in range(steps - 1, -1, -1):
            if alive[t] > b:
                carry = tuple(_C.cat([c, d.narrow(0, b, alive[t] - b)], 0)
                              for c, d in zip(carry, finals))
                b = alive[t]
            carry = step(t, carry)
        return carry
    # reverse: the forward added rows alive[t+1]..alive[t]-1 from the initial state at step t.
    carry, pieces = finals, []
    for t in range(steps):
        carry = step(t, carry)
        if carry is None:
            return None
        nxt = alive[t + 1] if t + 1 < steps else 0
        if nxt < alive[t]:
            pieces.append(tuple(c.narrow(0, nxt, alive[t] - nxt) for c in carry))
            carry = tuple(c.narrow(0, 0, nxt) for c in carry)
    pieces.reverse()
    return tuple(_C.cat([p[k] for p in pieces], 0) for k in range(len(finals)))


def recurrent_weight_grad(d_gates, h_prev, alive, first):
    """dW_hh = sum_t dG_t^T h_{t-1} as one matmul over the rows of all steps. The step that read
    a zero initial state (h_prev None) adds nothing and is left out: its rows are the first
    (forward direction) or the last (reverse) of d_gates."""
    if h_prev[first] is None:
        rows = d_gates._shape[0] - alive[first]
        d_gates = d_gates.narrow(0, alive[0] if first == 0 else 0, rows)
        h_prev = [h for h in h_prev if h is not None]
    return _C.mm(d_gates.t(), _C.cat(h_prev, 0))
