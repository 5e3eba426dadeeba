"""The checks of OneFlow-only ops (Note [Legacy ops' checks], src/ops/oneflow_functional_ops.cpp):
no PyTorch counterpart gives their wording or exception types, so they are upstream OneFlow's
(its python/oneflow/test/exceptions assert them): shape problems RuntimeError, dtype problems
TypeError, the op named first. Also the raw lists of _C.slice / _C.slice_update (Note [Raw slice
lists]) and a few messages of PyTorch ops that now carry PyTorch's exact words."""
import numpy as np
import pytest
import torch

import oneflow as flow

C = flow._C


def test_batch_gather_checks():
    with pytest.raises(RuntimeError, match=r"^batch_gather\(\): The dimension of the input tensor should be greater than zero"):
        flow.batch_gather(flow.tensor(1), flow.tensor([1]))
    with pytest.raises(RuntimeError, match="The dimension of the indices tensor should be greater than zero, but got 0"):
        flow.batch_gather(flow.tensor([1]), flow.tensor(1))
    with pytest.raises(RuntimeError, match="greater than or equal to the dimension of the indices tensor"):
        flow.batch_gather(flow.randn(1), flow.tensor([[1, 1], [1, 1]]))
    with pytest.raises(TypeError, match="The dtype of the indices tensor must be int32 or int64, but got float64"):
        flow.batch_gather(flow.randn(2), flow.tensor([1, 1], dtype=flow.float64))
    with pytest.raises(RuntimeError, match="must match the size of input tensor at dimension 0"):
        flow.batch_gather(flow.randn(4, 5), flow.tensor([[1, 2], [1, 2], [1, 2]]))
    out = flow.batch_gather(flow.tensor([[1.0, 2, 3], [4, 5, 6]]), flow.tensor([1, 0], dtype=flow.int32))
    assert out.tolist() == [[4, 5, 6], [1, 2, 3]]


def test_bias_add_reduce_sum_like_reshape_like_arg_sort_checks():
    with pytest.raises(RuntimeError, match=r"^bias_add\(\): Bias tensor has to be a one-dimensional vector"):
        C.bias_add(flow.ones(2, 2), flow.ones(2, 2), axis=0)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        C.bias_add(flow.ones(4, 4), flow.ones(5), axis=1)
    with pytest.raises(RuntimeError, match="must be consistent to the shape of the like tensor"):
        C.reduce_sum_like(flow.tensor([1, 1]), flow.tensor([1, 1, 1]), [])
    with pytest.raises(TypeError, match="Tensors x and like must have the same type"):
        C.reduce_sum_like(flow.tensor([1, 1]), flow.tensor([1.0, 1.0], dtype=flow.float64), [0])
    with pytest.raises(RuntimeError, match="element number of the in tensor must be equal to the element number"):
        C.reshape_like(flow.tensor([1, 1]), flow.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"^arg_sort\(\): expected the input direction parameter value is"):
        C.arg_sort(flow.tensor([5, 10, 7]), direction="NONE")


def test_split_like_checks_and_fewer_dims():
    x = flow.randn(4, 4)
    with pytest.raises(RuntimeError, match=r"The dimension of like \(3\) should be less than or equal to input \(2\)"):
        C.split_like(x, [flow.randn(2, 4, 4), flow.randn(2, 4, 4)], 0)
    with pytest.raises(RuntimeError, match="should be less than the dimension of like"):
        C.split_like(x, [flow.randn(2, 4), flow.randn(2, 4)], 3)
    with pytest.raises(RuntimeError, match="must match the dimension of the first like"):
        C.split_like(x, [flow.randn(2, 4), flow.randn(2)], 0)
    with pytest.raises(RuntimeError, match=r"The size of input \(4\) must match the size of like_i \(3\) at dimension 1"):
        C.split_like(x, [flow.randn(2, 4), flow.randn(2, 3)], 0)
    with pytest.raises(RuntimeError, match="In non-dynamic shape situation, the total size of like"):
        C.split_like(x, [flow.randn(2, 4), flow.randn(3, 4)], 0)
    # A like tensor of fewer dims gives the pieces' leading sizes; the pieces keep x's other dims.
    t = torch.randn(5, 3, 2, dtype=torch.float64)
    outs = C.split_like(flow.tensor(t.numpy()), [flow.zeros(2), flow.zeros(3)], 0)
    for o, r in zip(outs, torch.split(t, [2, 3], 0)):
        np.testing.assert_array_equal(o.numpy(), r.numpy())


def test_cross_entropy_legacy_checks():
    with pytest.raises(RuntimeError, match="The dimension of prediction must be greater than or equal to 2, but found 1"):
        C.softmax_cross_entropy(flow.randn(10), flow.randn(1, 10))
    with pytest.raises(RuntimeError, match=r"The size of label \[1, 11\] must match the size of prediction"):
        C.softmax_cross_entropy(flow.randn(1, 10), flow.randn(1, 11))
    with pytest.raises(TypeError, match="label and prediction are expected to have the same dtype"):
        C.softmax_cross_entropy(flow.randn(1, 10), flow.randn(1, 10, dtype=flow.float64))
    for op, extra in ((C.sparse_cross_entropy, (10,)), (C.sparse_softmax_cross_entropy, ())):
        with pytest.raises(RuntimeError, match="The dimension of prediction must be greater than or equal to 2"):
            op(flow.randn(10), flow.randint(0, 10, (10, 10)), *extra)
        with pytest.raises(RuntimeError, match="expected to be less than that of prediction by 1"):
            op(flow.randn(10, 10, 5), flow.randint(0, 10, (10, 10, 5)), *extra)
        with pytest.raises(RuntimeError, match=r"The size of prediction \(10\) must match the size of label \(9\)"):
            op(flow.randn(10, 10, 5), flow.randint(0, 10, (10, 9)), *extra)
        with pytest.raises(TypeError, match="The dtype of label must be integer, but found float32"):
            op(flow.randn(10, 10, 5), flow.randn(10, 10), *extra)


def test_softmax_cross_entropy_grad():
    rng = np.random.default_rng(0)
    logits = torch.tensor(rng.normal(size=(3, 4, 5)), requires_grad=True)
    label = torch.tensor(rng.dirichlet(np.ones(5), (3, 4)))
    dy = torch.tensor(rng.normal(size=(3, 4)))
    loss = -(label * torch.log_softmax(logits, -1)).sum(-1)
    (ref,) = torch.autograd.grad(loss, logits, dy)
    prob = flow.tensor(torch.softmax(logits, -1).detach().numpy())
    got = C.softmax_cross_entropy_grad(flow.tensor(dy.numpy()), flow.tensor(label.numpy()), prob)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="The dimension of prob must be greater than or equal to 2"):
        C.softmax_cross_entropy_grad(flow.randn(10, 5), flow.randn(10, 10, 5), flow.randn(10))
    with pytest.raises(RuntimeError, match="The dimension of dy is expected to be less than that of prob by 1"):
        C.softmax_cross_entropy_grad(flow.randn(10, 10, 5), flow.randn(10, 10, 5), flow.randn(10, 10, 5))
    with pytest.raises(RuntimeError, match=r"The size of dy \(8\) must match the size of label \(10\) at dimension 1"):
        C.softmax_cross_entropy_grad(flow.randn(10, 8), flow.randn(10, 10, 5), flow.randn(10, 10, 5))
    with pytest.raises(RuntimeError, match="must match the size of prob"):
        C.softmax_cross_entropy_grad(flow.randn(10, 10), flow.randn(10, 10, 5), flow.randn(10, 10, 6))
    f64 = dict(dtype=flow.float64)
    with pytest.raises(TypeError, match="label and prob are expected to have the same dtype"):
        C.softmax_cross_entropy_grad(flow.randn(10, 10, **f64), flow.randn(10, 10, 5), flow.randn(10, 10, 5, **f64))
    with pytest.raises(TypeError, match="dy and prob are expected to have the same dtype"):
        C.softmax_cross_entropy_grad(flow.randn(10, 10), flow.randn(10, 10, 5, **f64), flow.randn(10, 10, 5, **f64))


def test_in_top_k_and_roi_align_checks():
    pred = flow.tensor([[0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0]])
    with pytest.raises(RuntimeError, match="The num of targets must equal the num of predictions"):
        flow.in_top_k(flow.tensor([[3, 1]], dtype=flow.int32), pred, k=1)
    with pytest.raises(RuntimeError, match="The dimension of targets must be 1"):
        flow.in_top_k(flow.tensor([[3, 1], [1, 3]], dtype=flow.int32), pred, k=1)
    with pytest.raises(RuntimeError, match="The dimension of predictions must be 2"):
        flow.in_top_k(flow.tensor([3, 1], dtype=flow.int32), pred.reshape(2, 1, 4), k=1)
    with pytest.raises(RuntimeError, match="targets data type must be index type"):
        flow.in_top_k(flow.tensor([1.0, 1.0]), pred, 1)
    assert flow.in_top_k(flow.tensor([3, 0], dtype=flow.int32), pred, k=1).tolist() == [True, True]
    x = flow.randn(2, 3, 64, 64)
    with pytest.raises(RuntimeError, match="The dimension of x tensor must be equal to 4, but got 3"):
        flow.roi_align(flow.randn(2, 3, 64), flow.randn(2, 5), 2.0, 14, 14, 2, True)
    with pytest.raises(RuntimeError, match="The dimension of rois tensor must be equal to 2, but got 4"):
        flow.roi_align(x, flow.randn(2, 3, 64, 64), 2.0, 14, 14, 2, True)
    with pytest.raises(RuntimeError, match="The size of rois tensor must be equal to 5 at dimension 1, but got 3"):
        flow.roi_align(x, flow.randn(2, 3), 2.0, 14, 14, 2, True)


def test_raw_slice_lists():
    ref = flow.tensor([[1], [2]])
    with pytest.raises(RuntimeError, match=r"^slice\(\): The start list elements must be greater than or equal to 0"):
        C.slice(flow.tensor([1]), [-1], [1], [1])
    with pytest.raises(RuntimeError, match="The stop list elements must be greater than or equal to 0"):
        C.slice(flow.tensor([1]), [1], [-1], [1])
    with pytest.raises(RuntimeError, match="The step list elements must be greater than 0, but got -1"):
        C.slice(flow.tensor([1]), [1], [1], [-1])
    with pytest.raises(RuntimeError, match="must be less than or equal to the element in stop list at index 0"):
        C.slice(flow.tensor([1]), [2], [1], [1])
    with pytest.raises(RuntimeError, match=r"^slice_update\(\): The step list elements must be greater than 0"):
        C.slice_update(ref, ref, [1], [1], [0])
    with pytest.raises(RuntimeError, match="The size of slice tuple must be equal to the size of value tensor"):
        C.slice_update(flow.tensor([1, 2]), flow.tensor([1, 2]), [1, 2, 3], [1, 2, 3], [1, 2, 3])
    with pytest.raises(TypeError, match="Tensors ref and value must have same type"):
        C.slice_update(flow.tensor([1]), flow.tensor([0.5]), [1], [2], [1])
    # A stop past the end is clipped; flow.slice keeps Python's slice semantics (negative bounds and
    # steps) by normalising its tuples to these lists.
    x = np.arange(24).reshape(4, 6)
    assert C.slice(flow.tensor(x), [1, 0], [100, 6], [2, 4]).tolist() == x[1::2, ::4].tolist()
    for tups in ([[-3, None, 1], [None, None, -2]], [[None, None, -1], [5, 1, -3]], [[3, 1, 1]], [[-1, -5, -2]]):
        want = x[tuple(slice(*t) for t in tups)]
        assert flow.slice(flow.tensor(x), tups).tolist() == want.tolist(), tups


def test_pytorch_words():
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        flow.tensordot(flow.randn(2, 3, 4), flow.randn(2, 3, 4), dims=([1, 1], [1, 1]))
    with pytest.raises(RuntimeError, match="Trying to create tensor with negative dimension -1: \\[-1\\]"):
        flow.randperm(-1)
    with pytest.raises(RuntimeError, match="yet common dtype is oneflow.int32"):
        flow.nn.functional.cosine_similarity(flow.ones(2, 3, dtype=flow.int32), flow.ones(2, 3, dtype=flow.int32))
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor: Expected 3-dimensional tensor, but got "
                                           "1-dimensional tensor for argument #1"):
        flow.bmm(flow.randn(3), flow.randn(2, 3, 4))
