"""The recurrences behind nn.RNN / LSTM / GRU and their cells, as table ops.

Per layer and direction the input projection of every time step is one matmul (x W_ih^T + b,
before the loop), then a step is one addmm for h W_hh^T plus pointwise ops on views of the gate
matrix (gate order: LSTM i, f, g, o; GRU r, z, n; as PyTorch). LSTM's layer is one table op,
`lstm_layer` and GRU's `gru_layer` (src/ops/table/rnn.yaml: CPU float32/float64; elsewhere
the autograd.Functions of `_lstm_scan.py` and `_gru_scan.py`), so they trace into nn.Graph;
RNN's steps are recorded ops, and so are GRU's (off CPU) when its gradients must be
differentiable. The steps, the weights' arrangement and the loop's schedule over packed batches
are in `_rnn_steps.py` (Note [Zero initial state] there).
"""
import oneflow as flow
from ... import _oneflow_internal as _C
from ..._global_hooks import placed_like
from ._gru_scan import gru_layer
from ._lstm_scan import lstm_layer
from ._rnn_steps import STEPS, gate_steps, input_projection, run_direction, zero_state_allowed


def _table_layer_fits(weight):
    """Whether the lstm_layer / gru_layer table ops run this layer (CPU, float32/float64: their
    kernels' reach); other devices and dtypes keep the autograd.Functions of `_lstm_scan.py` and
    `_gru_scan.py`. Asked of a weight, not the input: inside nn.Graph's tracing the input is a
    meta tensor."""
    return weight.device.type == "cpu" and weight.dtype in (flow.float32, flow.float64)


def _may_differentiate(x2d, w, state0):
    """The table layers' train= (Note [RNN inference forward] in src/ops/rnn_ops.cpp): whether
    a backward can follow, i.e. grad mode is on and the input, an initial state or a weight
    requires grad. False lets oneDNN run its inference forward (no_grad, eval-time inputs)."""
    if not _C.is_grad_enabled():
        return False
    return any(t is not None and t.requires_grad
               for t in (x2d, w.w_ih, w.w_hh, w.b_ih, w.b_hh, w.w_hr) + tuple(state0))


def run_layer_direction(mode, x2d, w, state0, alive, reverse):
    """One layer-direction over the rows x2d (N, in); returns (output rows (N, H), state)."""
    if state0[0] is None and not zero_state_allowed(w.w_hh, len(alive)):
        state0 = tuple(flow.zeros(alive[0], n, dtype=x2d.dtype, **placed_like(x2d))
                       for n in w.state_sizes())
    if mode == "LSTM":
        if _table_layer_fits(w.w_ih):
            out, h, c, _ = _C.lstm_layer(x2d, w.w_ih, w.w_hh, w.b_ih, w.b_hh, w.w_hr, state0[0],
                                         state0[1], alive, reverse, _may_differentiate(x2d, w, state0))
            return out, (h, c)
        out, h, c = lstm_layer(x2d, w.w_ih, w.b_ih, w.b_hh, state0[0], state0[1], w.w_hh,
                               w.w_hr, alive, reverse)
        return out, (h, c)
    if mode == "GRU":
        if _table_layer_fits(w.w_ih):
            out, h, _ = _C.gru_layer(x2d, w.w_ih, w.w_hh, w.b_ih, w.b_hh, state0[0], alive, reverse,
                                     _may_differentiate(x2d, w, state0))
            return out, (h,)
        out, h = gru_layer(x2d, w.w_ih, w.b_ih, w.b_hh, state0[0], w.w_hh, alive, reverse)
        return out, (h,)
    gi = input_projection(x2d, w.w_ih, w.in_bias)
    step = STEPS[mode]

    def zero_state():
        return tuple(flow.zeros(alive[0], n, dtype=gi.dtype, **placed_like(gi))
                     for n in w.state_sizes())
    outs, state = run_direction(lambda t, g, s: step(g, s, w), gate_steps(mode, gi, w, alive),
                                alive, state0, reverse, zero_state)
    return _C.cat(outs, 0), state


def rnn_forward(mode, input, batch_sizes, hx, weights, num_layers, bidirectional, dropout,
                training, batch_first):
    """The multi-layer recurrence.

    input: padded (T, B, I) ((B, T, I) with batch_first) when batch_sizes is None, else packed
    data (N, I) with the list batch_sizes. hx: None or a tuple of (L * D, B, *) tensors (h or
    (h, c)). weights: a Weights per layer-direction. Returns (output, tuple of final states)."""
    dirs = 2 if bidirectional else 1
    n_state = 2 if mode == "LSTM" else 1
    padded = batch_sizes is None
    if padded:  # time-major inside: each step's rows are one contiguous block
        if batch_first:
            input = input.transpose(0, 1)
        steps, batch = input._shape[:2]
        alive = [batch] * steps
    else:
        alive = batch_sizes
        batch = batch_sizes[0]

    hx_layers = [s.unbind(0) for s in hx] if hx is not None else None
    finals = [[] for _ in range(n_state)]
    x = input.reshape(-1, input._shape[-1])  # rows, time-major
    for layer in range(num_layers):
        outputs = []
        for d in range(dirs):
            k = layer * dirs + d
            state0 = tuple(s[k] for s in hx_layers) if hx_layers is not None else (None,) * n_state
            out, state = run_layer_direction(mode, x, weights[k], state0, alive, d == 1)
            outputs.append(out)
            for i in range(n_state):
                finals[i].append(state[i])
        x = outputs[0] if dirs == 1 else _C.cat(outputs, 1)
        if dropout > 0 and training and layer < num_layers - 1:
            x = flow.nn.functional.dropout(x, dropout, True)
    if padded:
        x = x.reshape(steps, batch, x._shape[-1])
        if batch_first:
            x = x.transpose(0, 1)  # a view, as PyTorch's
    return x, tuple(flow.stack(f, 0) for f in finals)
