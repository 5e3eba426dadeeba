"""Index forms upstream OneFlow's indexing tests use (tensor/test_tensor_indexing*.py), each as
PyTorch 2.13 reads it: sequences inside the index, a list read as a tuple, bad slice bounds."""
import numpy as np
import pytest
import torch

import oneflow as flow


def _pair():
    a = np.arange(1, 25, dtype=np.float32).reshape(4, 3, 2)
    return flow.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("index", [
    ((0,),), ((2, 3, 1),), ((0, 1), (1, 2)), ([0, 1], (1, 2)), ((3,), slice(None), (1, 0)),
])
def test_tuple_inside_the_index_is_a_sequence_of_indices(index):
    f, t = _pair()
    np.testing.assert_array_equal(f[index].numpy(), t[index].numpy())


@pytest.mark.parametrize("index", [
    [[0, 0], [0, 1]], [[0, 1, 1, 0, 2], [1]], [flow.tensor([0, 1]), [1, 2]], [slice(1, 3), 0],
    [None, [0, 2]], [Ellipsis, [1, 0]], [[0, 1]], [0, 1, 1],
])
def test_list_holding_sequences_indexes_as_their_tuple(index):
    # PyTorch's rule: a list of fewer than 32 items holding a sequence, tensor, slice, None or
    # Ellipsis is the tuple of its items; a list of ints stays one advanced index.
    f, t = _pair()
    tindex = [torch.tensor(i.numpy()) if isinstance(i, flow.Tensor) else i for i in index]
    with pytest.warns(UserWarning) if any(not isinstance(i, int) for i in index) else _no_warning():
        expected = t[tindex]
    np.testing.assert_array_equal(f[index].numpy(), expected.numpy())


def test_list_as_tuple_assignment():
    f, t = _pair()
    f[[[0, 1], [2, 0]]] = -1.0
    t[([0, 1], [2, 0])] = -1.0
    np.testing.assert_array_equal(f.numpy(), t.numpy())


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("step", [0, -1])
def test_non_positive_step_is_both_value_and_runtime_error(step):
    # PyTorch raises ValueError, upstream OneFlow RuntimeError: code catching either works.
    f, t = _pair()
    with pytest.raises(ValueError) as te:
        t[1:3:step]
    for cls in (ValueError, RuntimeError):
        with pytest.raises(cls) as fe:
            f[1:3:step]
        # upstream's text may follow in brackets (Note [Upstream's words], src/autograd/meta.cpp)
        assert str(fe.value).split(" [OneFlow: ")[0] == str(te.value)


def test_float_slice_bounds_are_refused_as_torch():
    # int() used to truncate them silently; PyTorch's TypeError (upstream's RuntimeError too).
    f, t = _pair()
    with pytest.raises(TypeError) as te:
        t[0.0:2.0]
    for cls in (TypeError, RuntimeError):
        with pytest.raises(cls) as fe:
            f[0.0:2.0]
        assert str(fe.value) == str(te.value)
    with pytest.raises(TypeError):
        f[0:2:1.0]
    # integer-like bounds still work: numpy integers and 0-d integer tensors
    np.testing.assert_array_equal(f[np.int64(1):flow.tensor(3)].numpy(), t[1:3].numpy())


@pytest.mark.parametrize("index", [
    (True, Ellipsis, False, True), (False, True, Ellipsis), (0, True, Ellipsis, False),
    (slice(None), True, slice(None), False), (slice(None), True, slice(None), True),
    (slice(None), True, True), (None, True, slice(None), True, 1), (True,), (slice(1, 3), False),
])
def test_several_bools_make_one_dim_as_torch(index):
    # Python bools are advanced indices that combine: one dim (1 if all True, else 0), at the
    # first one when adjacent, in front otherwise. Each used to add its own dim.
    f, t = _pair()
    got, want = f[index], t[index]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    f[index] = -5.0
    t[index] = -5.0
    np.testing.assert_array_equal(f.numpy(), t.numpy())
