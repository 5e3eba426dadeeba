"""OpInfos of the embedding family (src/ops/table/embedding.yaml). max_norm's in-place renorm is
tested with the modules (tests/test_nn_modules_embedding.py): it writes into its input."""

import numpy as np

from .core import *  # noqa: F401,F403


def _F(name):
    return lambda lib: getattr(lib.nn.functional, name)


def _idx(values, dtype="int64"):
    return Arr(np.asarray(values).astype(dtype), dtype)


def embedding_samples(dtype, rng):
    w = lambda s: arr(rng, s, dtype)  # noqa: E731
    i = lambda s, d="int64": Arr(rng.integers(0, 6, size=s).astype(d), d)  # noqa: E731
    return [
        Sample((i((4,)), w((6, 3))), desc="1-d indices"),
        Sample((i((2, 5)), w((6, 3))), desc="2-d indices"),
        Sample((i((2, 3), "int32"), w((6, 3))), desc="int32 indices"),
        Sample((_idx([0, 2, 2, 5, 2]), w((6, 3))), {"padding_idx": 2}, desc="padding_idx"),
        Sample((_idx([0, 5, 5, 1]), w((6, 3))), {"padding_idx": -1}, desc="negative padding_idx"),
        Sample((_idx([1, 1, 3, 1, 0]), w((6, 3))), {"scale_grad_by_freq": True}, desc="scale_grad_by_freq"),
        Sample((_idx([1, 1, 3]), w((6, 3))), {"sparse": True}, desc="sparse (dense gradient)"),
        Sample((_idx(3), w((6, 3))), desc="0-d index"),
        Sample((i((0,)), w((6, 3))), desc="no indices"),
        Sample((_idx([0, 6]), w((6, 3))), desc="index out of range"),
        Sample((_idx([0, -1]), w((6, 3))), desc="negative index"),
    ]


def embedding_bag_samples(dtype, rng):
    w = lambda s: arr(rng, s, dtype)  # noqa: E731
    idx = _idx([0, 2, 4, 5, 4, 3, 2, 9])
    off = _idx([0, 3, 3, 6])
    out = []
    for mode in ("sum", "mean", "max"):
        out += [
            Sample((idx, w((10, 3)), off), {"mode": mode}, desc=f"{mode} offsets (empty bag)"),
            Sample((_idx([[1, 2, 4], [4, 3, 2]]), w((10, 3))), {"mode": mode}, desc=f"{mode} 2-d input"),
            Sample((idx, w((10, 3)), _idx([0, 3, 6, 8])), {"mode": mode, "include_last_offset": True},
                   desc=f"{mode} include_last_offset"),
            Sample((idx, w((10, 3)), off), {"mode": mode, "padding_idx": 2}, desc=f"{mode} padding_idx"),
        ]
    out += [
        Sample((idx, w((10, 3)), off), {"mode": "sum", "per_sample_weights": arr(rng, (8,), dtype)},
               desc="per_sample_weights"),
        Sample((idx, w((10, 3)), off), {"mode": "sum", "scale_grad_by_freq": True}, desc="scale_grad_by_freq"),
        Sample((idx, w((10, 3)), _idx([1, 3])), desc="offsets[0] != 0"),
        Sample((_idx([0, 10]), w((10, 3)), _idx([0])), desc="index out of range"),
        Sample((idx, w((10, 3)), off), {"mode": "median"}, desc="unknown mode"),
    ]
    return out


def one_hot_samples(dtype, rng):
    return [
        Sample((_idx([0, 3, 1, 2], dtype),), desc="inferred classes", meta=False),  # max + 1: data
        Sample((_idx([[0, 1], [2, 0]], dtype), 5), desc="2-d, num_classes"),
        Sample((_idx(2, dtype), 3), desc="0-d"),
        Sample((_idx([0, 4], dtype), 3), desc="class out of range"),
    ]


add(
    OpInfo("embedding", "embedding", FLOATS, embedding_samples, fn=_F("embedding"), method=""),
    OpInfo("embedding_bag", "embedding", ("float32", "float64"), embedding_bag_samples, fn=_F("embedding_bag"),
           method="", tol={"float32": (2e-6, 2e-6)}),
    OpInfo("one_hot", "embedding", ("int64",), one_hot_samples, fn=_F("one_hot"), method=""),
)


def _grad_of(fwd, wrt):
    """torch reference of a backward op: the VJP of fwd's output with respect to argument `wrt`,
    fwd(grad_output, *args) -> (output, the tensor to differentiate)."""

    def ref(torch):
        def f(grad, *args):
            with torch.enable_grad():
                out, x = fwd(torch, *args)
                (g,) = torch.autograd.grad(out, x, grad, create_graph=grad.requires_grad)
            return g

        return f

    return ref


def _embedding_fwd(torch, indices, num_weights, padding_idx, scale_grad_by_freq):
    w = torch.zeros(num_weights, 3, dtype=torch.float64, requires_grad=True)
    return torch.nn.functional.embedding(indices.long(), w, padding_idx=None if padding_idx < 0 else padding_idx,
                                         scale_grad_by_freq=scale_grad_by_freq), w


def _embedding_backward_ref(torch):
    def f(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
        return torch.ops.aten.embedding_dense_backward(grad, indices.long(), num_weights, padding_idx,
                                                       scale_grad_by_freq)

    return f


def embedding_backward_samples(dtype, rng):
    g = lambda s: arr(rng, s, dtype, Domain(-1.0, 1.0))  # noqa: E731
    return [
        Sample((g((4, 3)), _idx([0, 2, 2, 5]), 6, -1, False), desc="plain"),
        Sample((g((2, 2, 3)), _idx([[1, 1], [3, 1]]), 6, 1, False), desc="padding"),
        Sample((g((5, 3)), _idx([1, 1, 3, 1, 0]), 6, -1, True), desc="scale_grad_by_freq"),
    ]


def embedding_bag_backward_samples(dtype, rng):
    g = lambda s: arr(rng, s, dtype, Domain(-1.0, 1.0))  # noqa: E731
    w = arr(rng, (10, 3), dtype)
    idx, off = _idx([0, 2, 4, 5, 4, 3, 2, 9]), _idx([0, 3, 3, 6])
    return [Sample((g((4, 3)), w, idx, off, mode, None, False, -1, False), desc=mode) for mode in ("sum", "mean", "max")]


def _embedding_bag_backward_ref(torch):
    def f(grad, weight, indices, offsets, mode, psw, include_last, padding_idx, freq):
        w = weight.detach().requires_grad_(True)
        with torch.enable_grad():
            out = torch.nn.functional.embedding_bag(indices, w, offsets, mode=mode, per_sample_weights=psw,
                                                    include_last_offset=include_last,
                                                    padding_idx=None if padding_idx < 0 else padding_idx,
                                                    scale_grad_by_freq=freq)
            (g,) = torch.autograd.grad(out, w, grad)
        return g

    return f


def psw_backward_samples(dtype, rng):
    g = lambda s: arr(rng, s, dtype, Domain(-1.0, 1.0))  # noqa: E731
    return [Sample((g((4, 3)), arr(rng, (10, 3), dtype), _idx([0, 2, 4, 5, 4, 3, 2, 9]), _idx([0, 3, 3, 6]),
                    "sum", False, -1), desc="sum")]


def _psw_backward_ref(torch):
    def f(grad, weight, indices, offsets, mode, include_last, padding_idx):
        psw = torch.ones(indices.shape, dtype=weight.dtype, requires_grad=True)
        with torch.enable_grad():
            out = torch.nn.functional.embedding_bag(indices, weight.detach(), offsets, mode=mode,
                                                    per_sample_weights=psw, include_last_offset=include_last)
            (g,) = torch.autograd.grad(out, psw, grad)
        return g

    return f


add(
    OpInfo("embedding_backward", "embedding_backward", FLOATS, embedding_backward_samples,
           fn=lambda lib: lib._C.embedding_backward, ref=_embedding_backward_ref, method=""),
    OpInfo("embedding_bag_backward", "embedding_backward", ("float32", "float64"), embedding_bag_backward_samples,
           fn=lambda lib: lib._C.embedding_bag_backward, ref=_embedding_bag_backward_ref, method=""),
    OpInfo("embedding_bag_per_sample_weights_backward", "embedding_backward", ("float32", "float64"),
           psw_backward_samples, fn=lambda lib: lib._C.embedding_bag_per_sample_weights_backward,
           ref=_psw_backward_ref, method=""),
)
COVERED_ELSEWHERE["embedding_renorm"] = "tests/test_nn_modules_embedding.py (writes into its input)"
