"""Constructors given what they do not take (issue 39, found by tools/fuzz_torch.py): the storage
classes took any object as their tensor (Note [Storage constructors], python/oneflow/_storage.py),
the legacy tensor constructors a lone number as data. Each raises PyTorch's exception class, and
what PyTorch's constructors make, ours make alike."""
import warnings

import pytest
import torch

from error_cases import Case, check_error_case
from harness import flow


CASES = [
    Case("UntypedStorage(tensor)", lambda lib: lib.UntypedStorage(lib.zeros(2)), ["UntypedStorage", "Tensor"]),
    Case("UntypedStorage(None)", lambda lib: lib.UntypedStorage(None), ["UntypedStorage", "NoneType"]),
    Case("UntypedStorage(1.5)", lambda lib: lib.UntypedStorage(1.5), ["UntypedStorage", "float"]),
    Case("UntypedStorage(True)", lambda lib: lib.UntypedStorage(True), ["UntypedStorage", "bool"]),
    Case("UntypedStorage([1.5])", lambda lib: lib.UntypedStorage([1.5]), ["UntypedStorage", "float"]),
    Case("UntypedStorage('abc')", lambda lib: lib.UntypedStorage("abc"), ["UntypedStorage", "str"]),
    Case("UntypedStorage(2, 3)", lambda lib: lib.UntypedStorage(2, 3), ["UntypedStorage"]),
    Case("TypedStorage(tensor)", lambda lib: lib.TypedStorage(lib.zeros(2)), ["TypedStorage", "Tensor"]),
    Case("TypedStorage(None)", lambda lib: lib.TypedStorage(None), ["TypedStorage"]),
    Case("TypedStorage(1.5)", lambda lib: lib.TypedStorage(1.5), ["TypedStorage", "float"]),
    Case("TypedStorage(2, 3)", lambda lib: lib.TypedStorage(2, 3), ["TypedStorage"]),
    Case("Tensor(1.5)", lambda lib: lib.Tensor(1.5), ["Tensor", "sequence", "float"]),
    Case("FloatTensor(1.5)", lambda lib: lib.FloatTensor(1.5), ["sequence", "float"]),
    Case("LongTensor(1j)", lambda lib: lib.LongTensor(1j), ["sequence", "complex"]),
    Case("BoolTensor(None)", lambda lib: lib.BoolTensor(None), ["sequence", "NoneType"]),
    Case("Tensor('ab')", lambda lib: lib.Tensor("ab"), ["str"]),
    Case("Tensor.new(1.5)", lambda lib: lib.zeros(1).new(1.5), ["new", "sequence", "float"]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_constructor_refuses(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's TypedStorage deprecation
        check_error_case(case)


@pytest.mark.parametrize("args, kwargs", [((), {}), ((3,), {}), (([1, 2, 300, -1],), {}), (((7,),), {}),
                                          ((), {"device": "cpu"})])
def test_untyped_storage_as_pytorch(args, kwargs):
    s, t = flow.UntypedStorage(*args, **kwargs), torch.UntypedStorage(*args, **kwargs)
    assert len(s) == len(t) and s.dtype == flow.uint8
    if args and isinstance(args[0], (list, tuple)):
        assert s.tolist() == t.tolist()  # each byte modulo 256
    elif args:
        assert s.tolist() == [0] * len(t)  # PyTorch's bytes are uninitialised; ours zero


@pytest.mark.parametrize("args, kwargs", [((), {}), ((3,), {}), (([1.5, 2],), {}), (([[1, 2], [3, 4]],), {}),
                                          ((2,), {"dtype": "int64"}), (([1, 2],), {"dtype": "float64"}),
                                          ((True,), {})])
def test_typed_storage_as_pytorch(args, kwargs):
    kw = {k: getattr(flow, v) if k == "dtype" else v for k, v in kwargs.items()}
    kt = {k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.TypedStorage(*args, **kt)
    s = flow.TypedStorage(*args, **kw)
    assert len(s) == len(t) and str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    if args and isinstance(args[0], list):
        assert s.tolist() == t.tolist()


def test_storage_of_a_tensor_still_views_it():
    x = flow.tensor([1.0, 2.0])
    s = x.storage()
    s[0] = 5.0
    assert x.tolist() == [5.0, 2.0]
    assert x.untyped_storage().data_ptr() == x.data_ptr() and len(x.untyped_storage()) == 8


def test_legacy_constructors_take_sizes_and_sequences():
    assert flow.FloatTensor(2, 3).shape == (2, 3)
    assert flow.LongTensor([1, 2]).tolist() == [1, 2]
    assert flow.Tensor(range(3)).tolist() == [0.0, 1.0, 2.0]
    import numpy as np
    assert flow.Tensor(np.array(1.5)).item() == 1.5  # a 0-d array is data (as PyTorch)
    assert flow.zeros(1, dtype=flow.int64).new([3]).tolist() == [3]
