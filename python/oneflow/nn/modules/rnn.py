"""Recurrent layers: RNN (tanh / relu), LSTM (with projections), GRU, and their one-step cells.

Constructors, parameter names and shapes, initialisation, inputs (padded, unbatched or
PackedSequence), outputs, checks and reprs are PyTorch's. The recurrences are table ops:
`_rnn_impl.py` (layers, directions; the steps and packed batches in `_rnn_steps.py`), LSTM's layer the
`lstm_layer` op, GRU's the `gru_layer` op (src/ops/table/rnn.yaml; off CPU the autograd.Functions
of `_lstm_scan.py` and `_gru_scan.py`)."""
import math
import numbers
import warnings

from ... import _oneflow_internal as _C
from .. import init
from ..parameter import Parameter
from . import _rnn_impl, _rnn_steps
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


_PACKED = []


def _packed_sequence_type():
    if not _PACKED:
        from ..utils.rnn import PackedSequence
        _PACKED.append(PackedSequence)
    return _PACKED[0]


def _check_type(value, kind, name):
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")


class RNNBase(Module):
    """The multi-layer recurrence shared by RNN, LSTM and GRU; `mode` is 'RNN_TANH',
    'RNN_RELU', 'LSTM' or 'GRU'. Parameters per layer l and direction (suffix '_reverse' for the
    backward one): weight_ih_l{l} (gates*H, in), weight_hh_l{l} (gates*H, H or proj_size),
    bias_ih_l{l}, bias_hh_l{l} (gates*H), weight_hr_l{l} (proj_size, H) for LSTM projections."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        _check_type(bias, bool, "bias")
        _check_type(batch_first, bool, "batch_first")
        _check_type(input_size, int, "input_size")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        _check_type(hidden_size, int, "hidden_size")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size

        gate_size = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        factory = {"dtype": dtype, "device": device}
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else real_hidden * dirs
            for direction in range(dirs):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_in)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_C.empty(shape, **factory)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Kept for compatibility: parameters are used in place, there is nothing to flatten."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # -- checks (PyTorch's messages) -----------------------------------------------------------

    def check_input(self, input, batch_sizes):
        w = self._parameters[self._flat_weights_names[0]]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input._shape[-1]:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input._shape[-1]}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input._shape[0 if self.batch_first else 1]
        dirs = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * dirs, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx._shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx._shape)))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # -- forward -----------------------------------------------------------------------------

    def _layer_weights(self):
        params = self._parameters
        weights = []
        for names in self._all_weights:
            p = {n.split("_l")[0]: params[n] for n in names}
            weights.append(_rnn_steps.Weights(self.mode, p["weight_ih"], p["weight_hh"],
                                             p.get("bias_ih"), p.get("bias_hh"),
                                             p.get("weight_hr")))
        return weights

    def _prepare(self, input, hx, n_state):
        """Unpacks / batches the input and brings hx to (L * D, B, *) (a tuple of n_state
        tensors, or None). Returns (input, batch_sizes, hx, sorted, unsorted, batched)."""
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        if isinstance(input, _packed_sequence_type()):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes.tolist()]
            if hx is not None:
                hx = tuple(self.permute_hidden(h, sorted_indices) for h in hx)
            return input, batch_sizes, hx, sorted_indices, unsorted_indices, True
        if input.dim() not in (2, 3):
            got = f"{input.dim()}D tensor" if name == "RNN" else f"{input.dim()}D"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {got} instead")
        batched = input.dim() == 3
        if hx is not None:
            dims = [h.dim() for h in hx]
            want = 3 if batched else 2
            if any(d != want for d in dims):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                if n_state == 2:
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                       f"got ({dims[0]}-D, {dims[1]}-D) tensors")
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                   f"{dims[0]}-D tensor")
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                hx = tuple(h.unsqueeze(1) for h in hx)
        return input, None, hx, None, None, batched

    def _run(self, input, hx, n_state):
        PackedSequence = _packed_sequence_type()
        packed = isinstance(input, PackedSequence)
        x, batch_sizes, hx, sorted_indices, unsorted_indices, batched = self._prepare(
            input, hx, n_state)
        self.check_input(x, batch_sizes)
        if batch_sizes is None and x._shape[1 if self.batch_first else 0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        if hx is not None:
            expected = self.get_expected_hidden_size(x, batch_sizes)
            if n_state == 1:
                self.check_hidden_size(hx[0], expected)
            else:
                self.check_hidden_size(hx[0], expected, "Expected hidden[0] size {}, got {}")
                cell = (expected[0], expected[1], self.hidden_size)
                self.check_hidden_size(hx[1], cell, "Expected hidden[1] size {}, got {}")
        output, finals = _rnn_impl.rnn_forward(
            self.mode, x, batch_sizes, hx, self._layer_weights(), self.num_layers,
            self.bidirectional, self.dropout, self.training, self.batch_first)
        if packed:
            output = PackedSequence(output, input.batch_sizes, sorted_indices, unsorted_indices)
        elif not batched:
            output = output.squeeze(0 if self.batch_first else 1)
            finals = tuple(f.squeeze(1) for f in finals)
        finals = tuple(self.permute_hidden(f, unsorted_indices) for f in finals)
        return output, finals

    def forward(self, input, hx=None):
        output, finals = self._run(input, None if hx is None else (hx,), 1)
        return output, finals[0]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or relu.
    RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, device=None, dtype=None)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """LSTM with gates i, f, g, o; with proj_size > 0 the hidden state is projected by
    weight_hr. forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        expected = self.get_expected_hidden_size(input, batch_sizes)
        return (expected[0], expected[1], self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if isinstance(hx, tuple):
            return tuple(RNNBase.permute_hidden(self, h, permutation) for h in hx)
        return RNNBase.permute_hidden(self, hx, permutation)

    def forward(self, input, hx=None):
        output, finals = self._run(input, None if hx is None else tuple(hx), 2)
        return output, finals


class GRU(RNNBase):
    """GRU with gates r, z, n: n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)),
    h' = (1 - z) * n + z * h."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---------------------------------------------------------------------------
# Cells: one step of the recurrence.


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        factory = {"dtype": dtype, "device": device}
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(_C.empty((gates, input_size), **factory))
        self.weight_hh = Parameter(_C.empty((gates, hidden_size), **factory))
        if bias:
            self.bias_ih = Parameter(_C.empty(gates, **factory))
            self.bias_hh = Parameter(_C.empty(gates, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _cell_input(self, name, input, hx):
        """Batches input and hx (a tuple, entries may be None); PyTorch's checks."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for idx, h in enumerate(hx):
            if h is not None and h.dim() not in (1, 2):
                what = "hidden" if len(hx) == 1 else f"hx[{idx}]"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            hx = tuple(None if h is None else h.unsqueeze(0) for h in hx)
        rows, features = input._shape
        if features != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {features} "
                               f"expected {self.input_size}")
        for idx, h in enumerate(hx):
            if h is None:
                continue
            if rows != h._shape[0]:
                raise RuntimeError(f"Input batch size {rows} doesn't match hidden{idx} batch "
                                   f"size {h._shape[0]}")
            if h._shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{idx} has inconsistent hidden_size: got "
                                   f"{h._shape[1]}, expected {self.hidden_size}")
        return input, hx, batched

    def _step(self, mode, input, state):
        w = _rnn_steps.Weights(mode, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                              None)
        return _rnn_impl.run_layer_direction(mode, input, w, state, [input._shape[0]], False)[1]


class RNNCell(RNNCellBase):
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act tanh or relu."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (h,), batched = self._cell_input("RNNCell", input, (hx,))
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        (h,) = self._step(mode, input, (h,))
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: forward(input, (h, c)=None) -> (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._cell_input("LSTMCell", input,
                                                   (None, None) if hx is None else tuple(hx))
        h, c = self._step("LSTM", input, (h, c))
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: forward(input, h=None) -> h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), batched = self._cell_input("GRUCell", input, (hx,))
        (h,) = self._step("GRU", input, (h,))
        return h if batched else h.squeeze(0)
