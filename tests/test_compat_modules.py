"""The small modules and top-level APIs scripts import, against torch where torch has them:
flow.cuda (without a CUDA backend), flow.backends, nn.common_types, flow.Size, dtype attributes,
finfo/iinfo, tensor type objects, default dtype / tensor type, determinism and thread switches,
Tensor conveniences, and the eager-mode switch."""

import types
import warnings
from typing import Tuple, Union

import numpy as np
import pytest
import torch

from harness import SHIM, flow, to_numpy

pytestmark = pytest.mark.skipif(bool(SHIM), reason="oneflow's compatibility surface")

# ---------------------------------------------------------------------------
# flow.cuda without CUDA


@pytest.mark.no_cuda
def test_cuda_queries_without_backend():
    c = flow.cuda
    assert c.is_available() is False and c.device_count() == 0 and not c.is_initialized()
    assert c.memory_allocated() == 0 == c.max_memory_allocated() == c.memory_reserved()
    assert c.memory_stats() == {}
    c.empty_cache()
    c.manual_seed(0)
    c.manual_seed_all(0)
    c.seed_all()
    assert not c.is_bf16_supported()
    with c.device(-1):
        pass
    with c.stream(None):
        pass


@pytest.mark.no_cuda
@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.current_device(),
        lambda c: c.synchronize(),
        lambda c: c.set_device(0),
        lambda c: c.get_device_name(),
        lambda c: c.get_device_capability(),
        lambda c: c.initial_seed(),
        lambda c: c.get_rng_state(),
        lambda c: c.Stream(),
        lambda c: c.Event(),
        lambda c: c.device(0).__enter__(),
    ],
)
def test_cuda_errors_name_oneflow(call):
    with pytest.raises(RuntimeError, match="oneflow not compiled with CUDA enabled"):
        call(flow.cuda)
    with pytest.raises(AssertionError):  # PyTorch raises AssertionError: both catch it
        call(flow.cuda)


@pytest.mark.no_cuda
def test_cuda_amp_forms():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with flow.cuda.amp.autocast():
            assert not flow.is_autocast_enabled()
        assert not flow.cuda.amp.GradScaler().is_enabled()


@pytest.mark.no_cuda
def test_cuda_device_tensor_error():
    with pytest.raises(RuntimeError, match="cuda"):
        flow.zeros(2, device="cuda")


# ---------------------------------------------------------------------------
# flow.backends


def test_backends_flags_like_torch():
    for lib in (flow, torch):
        b = lib.backends
        assert b.cudnn.enabled is True and b.cudnn.benchmark is False
        assert b.cudnn.deterministic is False and b.cudnn.allow_tf32 is True
        assert b.cuda.matmul.allow_tf32 is False
        assert b.mps.is_available() is False
        assert isinstance(b.mkldnn.is_available(), bool)
        assert b.openmp.is_available() is True
    # With the CUDA backend (and cuDNN found by the build) these answer True / the version.
    device = flow.cuda.is_available()
    assert flow.backends.cudnn.is_available() is (device and flow.backends.cudnn.version() is not None)
    if not device:
        assert flow.backends.cudnn.version() is None
    flow.backends.cudnn.benchmark = True
    assert flow.backends.cudnn.benchmark is True
    with flow.backends.cudnn.flags(enabled=False, benchmark=False):
        assert flow.backends.cudnn.enabled is False
    assert flow.backends.cudnn.enabled is True and flow.backends.cudnn.benchmark is True
    flow.backends.cudnn.benchmark = False
    flow.backends.cuda.matmul.allow_tf32 = True
    assert flow.backends.cuda.matmul.allow_tf32
    flow.backends.cuda.matmul.allow_tf32 = False
    assert flow.backends.cuda.is_built() is device
    flow.backends.cuda.enable_flash_sdp(False)
    assert not flow.backends.cuda.flash_sdp_enabled()
    flow.backends.cuda.enable_flash_sdp(True)


# ---------------------------------------------------------------------------
# nn.common_types, Size, dtype, finfo / iinfo


def test_common_types():
    import oneflow.nn.common_types as f
    import torch.nn.common_types as t

    names = [
        n for n in dir(t) if n.startswith("_") and not n.startswith("__") and n != "_TypeAlias"
    ]
    missing = [n for n in names if not hasattr(f, n)]
    assert not missing, missing
    # The same typing constructs as torch's (int / tuple of ints), spelt typing.Tuple as upstream
    # OneFlow's: upstream's test generators eval(repr(...)) them where `tuple` is rebound.
    from typing import get_args, get_origin

    def shape(a):  # the construct, each framework's Tensor class read as "Tensor"
        if get_args(a):  # (`int | None` is a Union too)
            origin = Union if get_origin(a) is types.UnionType else get_origin(a)
            return origin, tuple(shape(x) for x in get_args(a))
        return "Tensor" if a in (flow.Tensor, torch.Tensor) else a

    for n in names:
        if not n.startswith("_scalar_or_tuple") and n not in ("T",):
            assert shape(getattr(f, n)) == shape(getattr(t, n)), n
    assert get_origin(f._size_2_t) is Union and get_args(f._size_2_t)[1] == Tuple[int, int]
    assert repr(f._size_1_t) == "typing.Union[int, typing.Tuple[int]]"


def test_size_like_torch():
    fs, ts = flow.Size([2, 3, 4]), torch.Size([2, 3, 4])
    assert fs.numel() == ts.numel() == 24
    assert fs.count(3) == ts.count(3) and fs.index(4) == ts.index(4)
    assert isinstance(fs[1:], flow.Size) and fs[1:] == (3, 4)
    assert isinstance(fs + (5,), flow.Size) and repr(fs) == "oneflow.Size([2, 3, 4])"
    assert flow.zeros(2, 3).shape == flow.Size([2, 3]) == (2, 3)
    assert flow.Size([]).numel() == 1


@pytest.mark.parametrize(
    "name", ["bool", "int8", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
)
def test_dtype_attributes_like_torch(name):
    f, t = getattr(flow, name), getattr(torch, name)
    assert f.is_floating_point == t.is_floating_point
    assert f.is_signed == t.is_signed
    assert f.is_complex == t.is_complex is False
    assert f.itemsize == t.itemsize == f.bytes


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo_like_torch(name):
    f, t = flow.finfo(getattr(flow, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(f, attr) == getattr(t, attr), attr
    assert repr(f).replace("oneflow", "torch") == repr(t)


@pytest.mark.parametrize("name", ["uint8", "int8", "int32", "int64"])
def test_iinfo_like_torch(name):
    f, t = flow.iinfo(getattr(flow, name)), torch.iinfo(getattr(torch, name))
    assert (f.bits, f.min, f.max, f.dtype) == (t.bits, t.min, t.max, t.dtype)
    assert repr(f) == repr(t)


def test_finfo_iinfo_errors_like_torch():
    assert flow.finfo().dtype == "float32"
    for lib in (flow, torch):
        with pytest.raises(TypeError, match="finfo"):
            lib.finfo(lib.int32)
        with pytest.raises(TypeError, match="iinfo"):
            lib.iinfo(lib.float32)
        with pytest.raises(TypeError):
            lib.iinfo(lib.bool)
        with pytest.raises(TypeError):
            lib.finfo(3)


# ---------------------------------------------------------------------------
# tensor type objects, default dtype / tensor type

TYPES = [
    ("HalfTensor", "float16"),
    ("BFloat16Tensor", "bfloat16"),
    ("FloatTensor", "float32"),
    ("DoubleTensor", "float64"),
    ("ByteTensor", "uint8"),
    ("CharTensor", "int8"),
    ("IntTensor", "int32"),
    ("LongTensor", "int64"),
    ("BoolTensor", "bool"),
]


@pytest.mark.parametrize("tname,dname", TYPES)
def test_tensor_types_like_torch(tname, dname):
    F, T = getattr(flow, tname), getattr(torch, tname)
    assert F.dtype == getattr(flow, dname) and str(T.dtype) == f"torch.{dname}"
    f, t = F(2, 3), T(2, 3)
    assert f.dtype == getattr(flow, dname) and tuple(f.shape) == tuple(t.shape) == (2, 3)
    f, t = F([1, 0]), T([1, 0])
    np.testing.assert_array_equal(to_numpy(f).astype(np.float64), t.double().numpy())
    assert isinstance(f, F) and isinstance(t, T)
    other = "FloatTensor" if tname != "FloatTensor" else "DoubleTensor"
    assert not isinstance(f, getattr(flow, other)) and not isinstance(t, getattr(torch, other))
    assert isinstance(f, flow.Tensor)
    assert f.type() == f"oneflow.{tname}" and t.type() == f"torch.{tname}"
    assert flow.zeros(2).type(F).dtype == F.dtype
    assert flow.zeros(2).type(f"torch.{tname}").dtype == F.dtype
    assert repr(F) == f"<class 'oneflow.{tname}'>"


@pytest.mark.parametrize("tname,dname", TYPES)
def test_cuda_tensor_types_like_torch_cuda(tname, dname):
    # torch.cuda.<X>Tensor: the same dtypes on the CUDA device; a CPU tensor is no instance.
    F, T = getattr(flow.cuda, tname), getattr(torch.cuda, tname)
    assert F.dtype == getattr(flow, dname) and repr(F) == f"<class 'oneflow.cuda.{tname}'>"
    assert repr(T) == f"<class 'torch.cuda.{tname}'>"
    x = getattr(flow, tname)(2)
    assert not isinstance(x, F) and not isinstance(torch.zeros(2, dtype=T.dtype), T)
    if flow.cuda.is_available():
        y = F([1, 0])
        assert y.is_cuda and y.dtype == F.dtype and isinstance(y, F)
        assert x.type(F).is_cuda and y.type(getattr(flow, tname)).device == flow.device("cpu")
    else:
        with pytest.raises(RuntimeError, match="no CUDA support"):
            F(2, 3)


def test_default_dtype_and_tensor_type():
    assert flow.get_default_dtype() == flow.float32
    try:
        flow.set_default_dtype(flow.float64)
        assert flow.tensor([1.5]).dtype == flow.float64 and flow.rand(2).dtype == flow.float64
        flow.set_default_tensor_type(flow.FloatTensor)
        assert flow.get_default_dtype() == flow.float32
        flow.set_default_tensor_type("torch.DoubleTensor")
        assert flow.get_default_dtype() == flow.float64
    finally:
        flow.set_default_dtype(flow.float32)
    for lib in (flow, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(TypeError, match="floating-point"):
                lib.set_default_tensor_type(lib.IntTensor)


# ---------------------------------------------------------------------------
# determinism, threads, small top-level functions


def test_determinism_and_threads_like_torch():
    for lib in (flow, torch):
        assert lib.are_deterministic_algorithms_enabled() is False
        lib.use_deterministic_algorithms(True, warn_only=True)
        assert lib.are_deterministic_algorithms_enabled()
        assert lib.is_deterministic_algorithms_warn_only_enabled()
        assert lib.get_deterministic_debug_mode() == 1
        lib.use_deterministic_algorithms(False)
        assert lib.get_deterministic_debug_mode() == 0
        assert isinstance(lib.get_num_interop_threads(), int) and lib.get_num_interop_threads() >= 1
        assert lib.get_num_threads() >= 1
    with pytest.raises(TypeError):
        flow.use_deterministic_algorithms("yes")


def test_top_level_tensor_predicates_like_torch():
    for lib in (flow, torch):
        assert lib.is_tensor(lib.zeros(1)) and not lib.is_tensor([1])
        assert lib.is_floating_point(lib.zeros(1)) and not lib.is_floating_point(
            lib.zeros(1, dtype=lib.int64)
        )
        assert lib.numel(lib.zeros(2, 3)) == 6
        assert lib.is_nonzero(lib.tensor([1.5])) and not lib.is_nonzero(lib.tensor(0))
        assert lib.tensor([2]).is_nonzero()
        with pytest.raises(RuntimeError, match="no values"):
            lib.is_nonzero(lib.tensor([]))
        with pytest.raises(RuntimeError, match="more than one value"):
            lib.is_nonzero(lib.tensor([1, 2]))


def test_eager_execution_switch():
    """True by default (tensors are eager); the switch decides how job functions run
    (tests/test_job_function.py runs them both ways)."""
    import subprocess
    import sys
    code = ("import oneflow as flow; a = flow.eager_execution_enabled(); flow.enable_eager_execution(False); "
            "b = flow.eager_execution_enabled(); flow.enable_eager_execution(True); "
            "print(a, b, flow.eager_execution_enabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False", "True"]


# ---------------------------------------------------------------------------
# Tensor conveniences


def test_new_factories_like_torch():
    for lib in (flow, torch):
        x = lib.zeros(2, dtype=lib.float64)
        assert x.new_zeros(2, 3).dtype == lib.float64 and tuple(x.new_zeros((2, 3)).shape) == (2, 3)
        assert x.new_ones(3).tolist() == [1.0, 1.0, 1.0]
        assert tuple(x.new_empty(4, 1).shape) == (4, 1)
        assert (
            x.new_full((2,), 7).tolist() == [7.0, 7.0] and x.new_full((2,), 7).dtype == lib.float64
        )
        assert x.new_tensor([1, 2]).dtype == lib.float64
        assert x.new_zeros(2, dtype=lib.int32).dtype == lib.int32
        assert x.new_ones(2, requires_grad=True).requires_grad
        assert lib.ones(2).type_as(x).dtype == lib.float64


@pytest.mark.parametrize("fmt", ["preserve_format", "contiguous_format", "channels_last"])
def test_clone_memory_format_like_torch(fmt):
    f = flow.arange(24.0).reshape(1, 2, 3, 4)
    t = torch.arange(24.0).reshape(1, 2, 3, 4)
    fc, tc = f.clone(memory_format=getattr(flow, fmt)), t.clone(memory_format=getattr(torch, fmt))
    assert fc.stride() == tc.stride()
    np.testing.assert_array_equal(to_numpy(fc), tc.numpy())
    fc2 = flow.clone(f, memory_format=getattr(flow, fmt))
    assert fc2.stride() == tc.stride()
    with pytest.raises(RuntimeError, match="rank"):
        flow.zeros(2, 3).clone(memory_format=flow.channels_last)


def test_clone_is_differentiable():
    x = flow.ones(2, 3, requires_grad=True)
    x.t().clone(memory_format=flow.contiguous_format).sum().backward()
    assert to_numpy(x.grad).tolist() == [[1.0] * 3] * 2


def test_init_methods_on_tensors():
    w = flow.empty(4, 5)
    for name in ("kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_"):
        assert getattr(w, name)() is w
        assert np.all(np.isfinite(to_numpy(w)))
