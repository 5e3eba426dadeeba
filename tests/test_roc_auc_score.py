"""flow.roc_auc_score (upstream OneFlow's op): the area under the ROC curve, against scikit-learn's
value when it is installed (the upstream suite's --extras install it) and against the rank formula
written out in numpy otherwise."""
import numpy as np
import pytest

import oneflow as flow


def _auc_by_pairs(label, pred):
    """Every (positive, negative) pair: 1 when the positive scores higher, 1/2 on a tie."""
    pos, neg = pred[label != 0], pred[label == 0]
    diff = pos[:, None] - neg[None, :]
    return ((diff > 0).sum() + 0.5 * (diff == 0).sum()) / (len(pos) * len(neg))


# dtype names, not dtype objects: pytest keeps its parameters until after the extension's teardown.
@pytest.mark.parametrize("label_dtype", ["float64", "int32", "float32", "int64", "int8", "uint8"])
def test_roc_auc_score_values(label_dtype):
    label_dtype = getattr(flow, label_dtype)
    got = flow.roc_auc_score(flow.tensor([0, 0, 1, 1], dtype=label_dtype), flow.tensor([0.1, 0.4, 0.35, 0.8]))
    assert got.dtype == flow.float32 and tuple(got.shape) == (1,)
    np.testing.assert_allclose(got.numpy(), [0.75])
    got = flow.roc_auc_score(flow.tensor([0, 1, 0, 1], dtype=label_dtype), flow.tensor([0.5] * 4))
    np.testing.assert_allclose(got.numpy(), [0.5])


def test_roc_auc_score_ties_and_reference():
    rng = np.random.default_rng(0)
    label = rng.integers(0, 2, 2000)
    pred = rng.integers(0, 50, 2000).astype(np.float32) / 50  # many ties
    got = flow.roc_auc_score(flow.tensor(label), flow.tensor(pred)).numpy()[0]
    np.testing.assert_allclose(got, _auc_by_pairs(label, pred), rtol=1e-6)
    try:
        from sklearn.metrics import roc_auc_score
    except ImportError:
        return
    np.testing.assert_allclose(got, roc_auc_score(label, pred), rtol=1e-6)


def test_roc_auc_score_errors():
    with pytest.raises(TypeError, match=r"roc_auc_score\(\): argument 'label'"):
        flow.roc_auc_score([0, 1], flow.tensor([0.1, 0.2]))
    with pytest.raises(RuntimeError, match="same number of elements"):
        flow.roc_auc_score(flow.tensor([0, 1, 1]), flow.tensor([0.1, 0.2]))
