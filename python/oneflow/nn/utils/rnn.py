"""nn.utils.rnn: PackedSequence and the helpers that pack, pad and unpad variable-length batches.

A packed sequence stores the valid time steps of a batch of sequences sorted by decreasing length,
time-major: the rows of step t are the first batch_sizes[t] sequences at step t. Packing and
unpacking are one gather (index_select) / one scatter (index_copy) with row positions computed on
the host from the lengths, so they are differentiable through the ordinary ops. Behaviour and
messages are PyTorch's."""
import oneflow as flow
from collections import namedtuple
from collections.abc import Iterable

import numpy as np

from ... import _oneflow_internal as _C

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
    "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence",
]


def invert_permutation(permutation):
    """The permutation p^-1 with p^-1[p[i]] = i (None stays None)."""
    if permutation is None:
        return None
    return flow.argsort(permutation)


def _init_args(data, batch_sizes, sorted_indices, unsorted_indices):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type not in ("cpu", "meta"):
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                "created manually. They should be instantiated by functions like pack_sequence "
                "and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices",
                                                    "unsorted_indices"])):
    """data (N, *) holds the valid steps time-major; batch_sizes (a CPU int64 tensor) the number
    of sequences alive at each step; sorted_indices / unsorted_indices map the original batch
    order to the decreasing-length order and back (None when the batch was already sorted)."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_init_args(data, batch_sizes, sorted_indices,
                                                unsorted_indices))

    def _with(self, data, index_fn):
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, index_fn),
                          _bind(self.unsorted_indices, index_fn))

    def to(self, *args, **kwargs):
        """Converts data as Tensor.to; the index tensors follow data's device, batch_sizes stays
        on the CPU. Returns self when data is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        kw = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        return self._with(data, lambda t: t.to(data.device, **kw))

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else device, non_blocking=non_blocking)

    def cpu(self):
        return self.to("cpu")

    def pin_memory(self):
        return self._with(self.data.pin_memory(), lambda t: t.pin_memory())

    def double(self):
        return self.to(dtype=flow.float64)

    def float(self):
        return self.to(dtype=flow.float32)

    def half(self):
        return self.to(dtype=flow.float16)

    def long(self):
        return self.to(dtype=flow.int64)

    def int(self):
        return self.to(dtype=flow.int32)

    def short(self):
        return self.to(dtype=flow.int16)

    def char(self):
        return self.to(dtype=flow.int8)

    def byte(self):
        return self.to(dtype=flow.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


# ---------------------------------------------------------------------------
# Row positions: packed row k <-> flat row of the padded (T, B, *) or (B, T, *) layout.


def _packed_positions(batch_sizes, max_batch, steps, batch_first):
    """Flat padded-layout rows of the packed rows, in packed order (numpy int64)."""
    bs = np.asarray(batch_sizes, dtype=np.int64)
    t = np.repeat(np.arange(len(bs), dtype=np.int64), bs)
    b = np.arange(int(bs.sum()), dtype=np.int64) - np.repeat(np.cumsum(bs) - bs, bs)
    return b * steps + t if batch_first else t * max_batch + b


def _index(positions, device):
    return flow.tensor(positions, dtype=flow.int64, device=device)


def _lengths_list(lengths):
    if isinstance(lengths, _C.Tensor):
        return [int(v) for v in lengths.to(dtype=flow.int64).cpu().tolist()]
    return [int(v) for v in lengths]


def _pack(input, lengths, batch_first):
    """The packed rows and batch sizes of `input` (lengths sorted, decreasing)."""
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.shape[0 if batch_first else 1]
    steps = input.shape[1 if batch_first else 0]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
            "sidestep this requirement if you do not need ONNX exportability.")
    if lengths[0] > steps:
        raise RuntimeError(f"Length of a sample ({lengths[0]}) exceeds the padded sequence "
                           f"length ({steps})")
    lens = np.asarray(lengths, dtype=np.int64)
    batch_sizes = (lens[None, :] > np.arange(lengths[0])[:, None]).sum(1)
    rows = input.reshape(batch * steps, *input.shape[2:])
    data = rows.index_select(0, _index(_packed_positions(batch_sizes, batch, steps, batch_first),
                                       input.device))
    return data, flow.tensor(batch_sizes, dtype=flow.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of the given
    lengths. With enforce_sorted=True the lengths must be decreasing; otherwise the batch is
    sorted here and the permutation kept in the result."""
    lengths = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable
        lengths = [lengths[i] for i in order]
        sorted_indices = flow.tensor(order, dtype=flow.int64, device=input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded, lengths), padded (T, B, *) or (B, T, *) with
    T = total_length when given (at least the longest length), in the original batch order."""
    data, batch_sizes = sequence.data, sequence.batch_sizes
    bs = [int(v) for v in batch_sizes.tolist()]
    max_len = len(bs)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_len}")
        max_len = total_length
    batch = bs[0]
    positions = _packed_positions(bs, batch, max_len, batch_first)
    rows = flow.full((batch * max_len, *data.shape[1:]), padding_value, dtype=data.dtype,
                     device=data.device)
    padded = rows.index_copy(0, _index(positions, data.device), data)
    padded = padded.reshape(*((batch, max_len) if batch_first else (max_len, batch)),
                            *data.shape[1:])
    lengths = (np.asarray(bs)[None, :] > np.arange(batch)[:, None]).sum(1)
    lengths = flow.tensor(lengths, dtype=flow.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.cpu())
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences (L_i, *) into (T, B, *) (or (B, T, *)), T = max L_i, padding each on
    the right (or the left) with padding_value."""
    if isinstance(sequences, _C.Tensor):
        sequences = sequences.unbind(0)
    elif not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    padded = []
    for s in sequences:
        missing = max_len - s.shape[0]
        if missing:
            pad = flow.full((missing, *trailing), padding_value, dtype=s.dtype, device=s.device)
            s = flow.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        padded.append(s)
    return flow.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences (L_i, *) of a padded batch (right padding)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences (L_i, *) (decreasing lengths unless enforce_sorted=False)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
