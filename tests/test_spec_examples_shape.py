"""The spec's eager examples of the shape/matmul family (spec/000: Tensor methods and eager ops;
INVENTORY groups A/B: addmm, diag, flip, repeat, tile, triu, view, to, type_as, reshape, expand,
permute, transpose, squeeze/unsqueeze, stack, chunk, cast), run as written (with
`import oneflow as flow`) and checked against the outputs the spec states. Where the spec only
references an op (addmm, diag, flip), its documented semantics are checked on small values;
diag's and expand's values come from their job-function examples, run eagerly."""

import numpy as np
import pytest

from harness import SHIM, flow

pytestmark = pytest.mark.skipif(bool(SHIM), reason="OneFlow's own API and printing")


def test_cast():
    np_arr = np.random.randn(2, 3, 4, 5).astype(np.float32)
    input = flow.Tensor(np_arr, dtype=flow.float32)
    output = flow.cast(input, flow.int8)
    assert np.array_equal(output.numpy(), np_arr.astype(np.int8))
    assert output.dtype == flow.int8


def test_chunk():
    np_arr = np.random.randn(5, 3, 6, 9).astype(np.float32)
    input = flow.Tensor(np_arr)
    of_out = flow.chunk(input, chunks=3, dim=2)
    assert [o.numpy().shape for o in of_out] == [(5, 3, 2, 9), (5, 3, 2, 9), (5, 3, 2, 9)]
    of_out = flow.chunk(input, chunks=4, dim=3)
    assert [o.numpy().shape for o in of_out] == [(5, 3, 6, 2), (5, 3, 6, 2), (5, 3, 6, 2), (5, 3, 6, 3)]


_X = np.array([[[[0, 1]], [[2, 3]], [[4, 5]]]]).astype(np.int32)


def test_expand():
    input = flow.Tensor(_X)
    out = input.expand(1, 3, 2, 2)
    assert out.shape == flow.Size([1, 3, 2, 2])
    # The job-function example's stated values, eagerly.
    want = [[[[0, 1], [0, 1]], [[2, 3], [2, 3]], [[4, 5], [4, 5]]]]
    assert out.numpy().tolist() == want
    assert flow.expand(flow.tensor(_X), [1, 3, 2, 2]).numpy().tolist() == want


def test_permute():
    input = flow.Tensor(np.random.randn(2, 6, 5, 3), dtype=flow.float32)
    out = input.permute(1, 0, 2, 3).shape
    assert out == flow.Size([6, 2, 5, 3])
    assert flow.permute(input, (1, 0, 2, 3)).shape == flow.Size([6, 2, 5, 3])


def test_repeat():
    input = flow.Tensor(_X)
    out = input.repeat(sizes=(1, 1, 2, 2))
    assert out.shape == flow.Size([1, 3, 2, 4])
    np.testing.assert_array_equal(out.numpy(), np.tile(_X, (1, 1, 2, 2)))
    np.testing.assert_array_equal(flow.repeat(input, (1, 1, 2, 2)).numpy(), np.tile(_X, (1, 1, 2, 2)))


_X16 = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]]).astype(np.float32)


def test_reshape():
    input = flow.Tensor(_X16)
    y = flow.reshape(input, shape=[2, 2, 2, -1]).shape
    assert y == flow.Size([2, 2, 2, 2])


def test_view():
    input = flow.Tensor(_X16)
    y = flow.view(input, shape=[2, 2, 2, -1]).numpy().shape
    assert y == (2, 2, 2, 2)
    np.testing.assert_array_equal(flow.view(input, [16]).numpy(), _X16.reshape(16))


def test_squeeze_unsqueeze():
    input = flow.Tensor(np.array([[[[1, 1, 1]]]]).astype(np.int32))
    out = flow.squeeze(input, dim=[1, 2]).shape
    assert out == flow.Size([1, 3])
    x = flow.Tensor(np.random.rand(2, 3, 4))
    y = x.unsqueeze(2)
    assert y.shape == flow.Size([2, 3, 1, 4])
    assert flow.unsqueeze(x, 2).shape == flow.Size([2, 3, 1, 4])


def test_stack():
    x = flow.Tensor(np.random.rand(1, 3, 5))
    y = flow.Tensor(np.random.rand(1, 3, 5))
    out = flow.stack([x, y], dim=-1)
    assert out.shape == flow.Size([1, 3, 5, 2])


def test_tile():
    x = np.array([1, 2]).astype(np.int32)
    input = flow.Tensor(x, dtype=flow.int32)
    out = input.tile(reps=(2,))
    assert repr(out) == "tensor([1, 2, 1, 2], dtype=oneflow.int32)"
    x = np.random.randn(5, 2, 1)
    input = flow.Tensor(x)
    out = input.tile(reps=(3, 4))
    assert out.size() == flow.Size([5, 6, 4])
    assert flow.tile(input, (3, 4)).shape == flow.Size([5, 6, 4])


def test_to():
    arr = np.random.randint(1, 9, size=(1, 2, 3, 4))
    input = flow.Tensor(arr)
    output = input.to(dtype=flow.float32)  # the example's call line was lost in the scrape
    assert np.array_equal(arr.astype(np.float32), output.numpy())
    assert output is input  # already float32 on the same device: input itself
    assert flow.to(input, flow.int64).dtype == flow.int64


def test_transpose():
    input = flow.Tensor(np.random.randn(2, 6, 5, 3), dtype=flow.float32)
    out = flow.transpose(input, 0, 1).shape
    assert out == flow.Size([6, 2, 5, 3])


def test_triu():
    x = flow.Tensor(np.ones(shape=(3, 3)).astype(np.float32))
    assert repr(flow.triu(x)) == (
        "tensor([[1., 1., 1.],\n"
        "        [0., 1., 1.],\n"
        "        [0., 0., 1.]], dtype=oneflow.float32)"
    )


def test_type_as():
    input = flow.Tensor(np.random.randn(1, 2, 3), dtype=flow.float32)
    target = flow.Tensor(np.random.randn(4, 5, 6), dtype=flow.int32)
    input = input.type_as(target)
    assert input.dtype == flow.int32


def test_flatten():
    input = flow.Tensor(32, 1, 5, 5)
    output = input.flatten(start_dim=1)
    assert output.shape == flow.Size([32, 25])


def test_diag():
    # The job-function example's input and stated output, eagerly; and the vector case.
    input = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], dtype=np.float32)
    out = flow.diag(flow.tensor(input))
    assert out.numpy().tolist() == [1.0, 5.0, 9.0]
    assert flow.tensor(input).diag(1).numpy().tolist() == [2.0, 6.0]
    assert flow.diag(flow.tensor([1.0, 2.0])).numpy().tolist() == [[1.0, 0.0], [0.0, 2.0]]


def test_flip():
    x = flow.tensor(np.arange(8).reshape(2, 2, 2).astype(np.float32))
    np.testing.assert_array_equal(flow.flip(x, [0, 1]).numpy(), np.flip(np.arange(8).reshape(2, 2, 2), (0, 1)))
    np.testing.assert_array_equal(x.flip(2).numpy(), np.flip(np.arange(8).reshape(2, 2, 2), 2))


def test_addmm():
    # beta * input + alpha * mat1 @ mat2; OneFlow's positional order is (alpha, beta).
    inp = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    m1 = np.array([[1.0, 0.5, 2.0], [0.0, 1.0, -1.0]], np.float32)
    m2 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    want = 3.0 * inp + 2.0 * (m1 @ m2)
    got = flow.addmm(flow.tensor(inp), flow.tensor(m1), flow.tensor(m2), 2.0, 3.0)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    got = flow.tensor(inp).addmm(flow.tensor(m1), flow.tensor(m2), alpha=2.0, beta=3.0)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
