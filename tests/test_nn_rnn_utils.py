"""nn.utils.rnn against torch: PackedSequence, pad_sequence (both sides), pack_padded_sequence /
pad_packed_sequence round trips (sorted or not, batch_first, total_length), pack_sequence,
unpack_sequence, unpad_sequence, their gradients and errors."""
import numpy as np
import pytest
import torch

from harness import flow
from error_cases import raises_like_torch
from nn_util import arr, close, leaf_pair, packed_pair


U_F, U_T = flow.nn.utils.rnn, torch.nn.utils.rnn


def _seqs(lengths, trailing=(3,), dtype=np.float32):
    return [arr(n, *trailing, dtype=dtype) for n in lengths]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("trailing", [(), (3,), (2, 2)])
def test_pad_sequence(batch_first, side, trailing):
    seqs = _seqs([3, 5, 1, 5], trailing)
    pf = [leaf_pair(s) for s in seqs]
    of = U_F.pad_sequence([p[0] for p in pf], batch_first, -1.5, side)
    ot = U_T.pad_sequence([p[1] for p in pf], batch_first, -1.5, side)
    close(of, ot, 0, 0)
    w = arr(*ot.shape)
    (of * flow.tensor(w)).sum().backward()
    (ot * torch.tensor(w)).sum().backward()
    for a, b in pf:
        close(a.grad, b.grad, 0, 0)


def test_pad_sequence_defaults_and_tensor_input():
    seqs = _seqs([2, 4])
    close(U_F.pad_sequence([flow.tensor(s) for s in seqs]),
          U_T.pad_sequence([torch.tensor(s) for s in seqs]), 0, 0)
    x = arr(3, 4, 2)  # a tensor is a sequence of its rows
    close(U_F.pad_sequence(flow.tensor(x)), U_T.pad_sequence(torch.tensor(x)), 0, 0)


def test_pad_sequence_errors():
    raises_like_torch(lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2)], padding_side="middle"))
    raises_like_torch(lambda lib: lib.nn.utils.rnn.pad_sequence([]), RuntimeError)
    with pytest.raises(RuntimeError, match="Expected iterable"):
        U_F.pad_sequence(3)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [
    ([5, 3, 3, 1], True), ([3, 5, 1, 3], False), ([4], True), ([2, 2, 2], True),
    ([1, 2, 3, 4], False)])
def test_pack_padded_round_trip(batch_first, lengths, enforce_sorted):
    batch, steps = len(lengths), max(lengths)
    x = arr(*((batch, steps, 3) if batch_first else (steps, batch, 3)))
    xf, xt, pf, pt = packed_pair(x, lengths, enforce_sorted, batch_first)
    close(pf.data, pt.data, 0, 0)
    assert pf.batch_sizes.tolist() == pt.batch_sizes.tolist()
    assert pf.batch_sizes.dtype == flow.int64 and pf.batch_sizes.device.type == "cpu"
    if enforce_sorted:
        assert pf.sorted_indices is None and pf.unsorted_indices is None
    else:
        assert pf.sorted_indices.tolist() == pt.sorted_indices.tolist()
        assert pf.unsorted_indices.tolist() == pt.unsorted_indices.tolist()
    for total in (None, steps + 2):
        of, lf = U_F.pad_packed_sequence(pf, batch_first, padding_value=7.0, total_length=total)
        ot, lt = U_T.pad_packed_sequence(pt, batch_first, padding_value=7.0, total_length=total)
        close(of, ot, 0, 0)
        assert lf.tolist() == lt.tolist() == lengths and lf.dtype == flow.int64
    # gradients flow through pack and pad
    w = arr(*ot.shape)
    (of * flow.tensor(w)).sum().backward()
    (ot * torch.tensor(w)).sum().backward()
    close(xf.grad, xt.grad, 0, 0)


def test_pack_padded_lengths_as_tensor():
    x = arr(4, 2, 3)
    pf = U_F.pack_padded_sequence(flow.tensor(x), flow.tensor([4, 2]))
    pt = U_T.pack_padded_sequence(torch.tensor(x), torch.tensor([4, 2]))
    close(pf.data, pt.data, 0, 0)


def test_pack_padded_errors():
    def unsorted(lib):
        return lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [2, 4, 1])
    raises_like_torch(unsorted, RuntimeError)
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order "
                                           "when `enforce_sorted` is True"):
        unsorted(flow)
    raises_like_torch(lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [4, 2, 0]),
                RuntimeError)
    raises_like_torch(lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 3, 2), [4, 2]),
                RuntimeError)
    raises_like_torch(lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(lib.ones(4, 2, 2), [4, 2]), total_length=3),
        ValueError)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack(enforce_sorted):
    lengths = [4, 3, 3, 1] if enforce_sorted else [3, 1, 4, 3]
    seqs = _seqs(lengths)
    pf = U_F.pack_sequence([flow.tensor(s) for s in seqs], enforce_sorted)
    pt = U_T.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted)
    close(pf.data, pt.data, 0, 0)
    assert pf.batch_sizes.tolist() == pt.batch_sizes.tolist()
    back = U_F.unpack_sequence(pf)
    assert len(back) == len(seqs)
    for a, s in zip(back, seqs):
        close(a, s, 0, 0)


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence(batch_first):
    seqs = _seqs([2, 5, 3])
    padded = U_F.pad_sequence([flow.tensor(s) for s in seqs], batch_first)
    for lengths in ([2, 5, 3], flow.tensor([2, 5, 3])):
        out = U_F.unpad_sequence(padded, lengths, batch_first)
        ref = U_T.unpad_sequence(U_T.pad_sequence([torch.tensor(s) for s in seqs], batch_first),
                                 torch.tensor([2, 5, 3]), batch_first)
        for a, b in zip(out, ref):
            close(a, b, 0, 0)


def test_packed_sequence_object():
    p = U_F.pack_sequence([flow.tensor(s) for s in _seqs([3, 1, 2])], enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = p  # a 4-tuple
    assert p.data is data and p.batch_sizes is batch_sizes
    assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert sorted_indices.tolist() == [0, 2, 1] and unsorted_indices.tolist() == [0, 2, 1]
    assert p.to(flow.float32) is p
    d = p.double()
    assert d.data.dtype == flow.float64 and d.batch_sizes is p.batch_sizes
    assert d.sorted_indices.tolist() == [0, 2, 1]
    assert p.to("cpu") is p and not p.is_cuda
    # construction from (data, batch_sizes) computes unsorted_indices
    q = U_F.PackedSequence(p.data, p.batch_sizes, p.sorted_indices)
    assert q.unsorted_indices.tolist() == [0, 2, 1]
    r = U_F.PackedSequence((p.data, p.batch_sizes))
    assert r.batch_sizes is p.batch_sizes and r.sorted_indices is None
    assert U_F.invert_permutation(flow.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert U_F.invert_permutation(None) is None
