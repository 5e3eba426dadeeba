"""OneFlow's nn.functional.ctc_greedy_decoder (upstream's modules/test_ctc_greedy_decoder.py),
against a step-by-step reference of its definition (PyTorch has no such function)."""
import numpy as np
import pytest

import oneflow as flow


def _reference(log_probs, lengths, merge_repeated):
    t_max, n, c = log_probs.shape
    decoded = np.zeros((n, t_max), dtype=np.int64)
    neg = np.zeros((n, 1), dtype=log_probs.dtype)
    for b in range(n):
        prev, k = -1, 0
        for t in range(lengths[b]):
            m = int(np.argmax(log_probs[t, b]))
            neg[b, 0] -= log_probs[t, b, m]
            if m != c - 1 and not (merge_repeated and m == prev):
                decoded[b, k] = m
                k += 1
            prev = m
    return decoded, neg


@pytest.mark.parametrize("merge_repeated", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ctc_greedy_decoder_matches_its_definition(merge_repeated, seed):
    rng = np.random.default_rng(seed)
    # few classes and a peaked distribution: repeats and blanks are frequent
    logits = rng.standard_normal((20, 4, 3)).astype(np.float32) * 3
    log_probs = logits - np.log(np.exp(logits).sum(2, keepdims=True))
    lengths = rng.integers(10, 21, size=4)
    want_dec, want_neg = _reference(log_probs, lengths, merge_repeated)
    dec, neg = flow.nn.functional.ctc_greedy_decoder(flow.tensor(log_probs), flow.tensor(lengths), merge_repeated)
    assert dec.dtype == flow.int64 and tuple(dec.shape) == (4, 20) and tuple(neg.shape) == (4, 1)
    np.testing.assert_array_equal(dec.numpy(), want_dec)
    np.testing.assert_allclose(neg.numpy(), want_neg, rtol=1e-5)


def test_ctc_greedy_decoder_checks_shapes():
    with pytest.raises(RuntimeError, match=r"log_probs must be \(T, N, C\)"):
        flow.nn.functional.ctc_greedy_decoder(flow.zeros(3, 4), flow.tensor([3]))
    with pytest.raises(RuntimeError, match="input_lengths must have shape"):
        flow.nn.functional.ctc_greedy_decoder(flow.zeros(3, 2, 4), flow.tensor([3]))
