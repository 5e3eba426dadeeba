"""The kernel registry's rules (Note [Kernel registry], src/kernels/registry.h), checked on the
sources: they hold in every build, CPU-only included, where the CUDA half is never compiled.

- every kernel interface (a tag struct with `kName` in src/kernels/*.h) has a CPU kernel
  registered from src/kernels/*.cpp, and every registration names a declared interface;
- every src/cuda Register*Kernels() is called by cuda::RegisterKernels() (src/cuda/registry.cpp),
  which is what keeps the .cu objects in the link;
- src/kernels/ includes no cuda/ header, and no file outside src/cuda/ tests ONEFLOW_WITH_CUDA:
  the registry learns at load whether a CUDA backend is in the build (a backend names its
  registration function through kernels/device_registrar.h), and the op-level host fallback
  (ops/host_fallback.h) asks it;
- every file that still raises the "no kernel" error itself (OF_THROW_NO_KERNEL) is one of the
  host-only steps listed in Note [Host fallback].

And on the module: the registry answers per (kernel, device, dtype) (flow._C._kernel_route), and
CallKernel takes the host fallback for a dtype the device's kernel leaves out without raising
(the probe kernel of src/api/kernel_registry_bind.cpp, a simulated CUDA registration that a
CPU-only build runs on host tensors).
"""
import pathlib
import re

import pytest

import oneflow as flow

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
CUDA_BUILD = hasattr(flow._C, "_cuda_version")
ALL_DTYPES = [flow.bool, flow.int8, flow.uint8, flow.int16, flow.int32, flow.int64, flow.float16,
              flow.bfloat16, flow.float32, flow.float64, flow.complex64, flow.complex128]
# `#if` lines naming ONEFLOW_WITH_CUDA outside src/cuda/: 149 before the registry, none since the
# host fallback's policy moved into it (issue 38: only src/cuda/ and the registry may have them, and
# the registry needs none).
MAX_CUDA_IFDEFS = 0


def _read(p):
    return p.read_text(encoding="utf-8")


def _kernel_files(pattern):
    return sorted((SRC / "kernels").rglob(pattern))


def test_every_interface_has_a_cpu_kernel_and_registrations_name_interfaces():
    declared = set()
    for h in _kernel_files("*.h"):
        declared |= set(re.findall(r"struct (\w+Kernel) \{\s*static constexpr const char\* kName", _read(h)))
    assert len(declared) >= 30, sorted(declared)
    cpu = set()
    for f in _kernel_files("*.cpp"):
        cpu |= set(re.findall(r"RegisterKernel<kernels::(\w+)>\(DeviceType::kCPU", _read(f)))
    assert declared - cpu == set(), "interfaces without a CPU kernel"
    assert cpu - declared == set(), "CPU registrations of undeclared interfaces"
    cuda = set()
    for f in sorted((SRC / "cuda").rglob("*")):
        if f.suffix in (".cu", ".cpp"):
            cuda |= set(re.findall(r"RegisterKernel<kernels::(\w+)>\(DeviceType::kCUDA", _read(f)))
    assert cuda, "no CUDA registrations found"
    assert cuda - declared == set(), "CUDA registrations of undeclared interfaces"


def test_every_cuda_registration_function_is_called_once():
    defined = set()
    for f in sorted((SRC / "cuda").rglob("*")):
        if f.suffix in (".cu", ".cpp") and f.name != "registry.cpp":
            defined |= set(re.findall(r"^void (Register\w+Kernels)\(\) \{", _read(f), re.M))
    registry = _read(SRC / "cuda" / "registry.cpp")
    called = re.findall(r"^  (Register\w+Kernels)\(\);", registry, re.M)
    assert sorted(called) == sorted(defined)
    assert len(called) == len(set(called))
    # cuda::RegisterKernels reaches the registry through a DeviceKernels object in a file the module
    # always links (kernels/device_registrar.h): the registry names no backend.
    binds = "".join(_read(f) for f in sorted((SRC / "cuda").glob("*_bind.cpp")))
    assert re.search(r"kernels::DeviceKernels \w+\(DeviceType::kCUDA, &cuda::RegisterKernels\)", binds)
    assert "cuda::" not in _read(SRC / "kernels" / "registry.cpp")


def test_kernels_do_not_include_cuda_headers_and_cuda_ifdefs_do_not_grow():
    including = {f.name for f in (SRC / "kernels").rglob("*") if f.is_file() and '#include "cuda/' in _read(f)}
    assert including == set()
    count = 0
    for f in SRC.rglob("*"):
        if f.suffix not in (".h", ".cpp") or "cuda" in f.relative_to(SRC).parts[:1]:
            continue
        count += len(re.findall(r"^\s*#\s*(?:if|ifdef|ifndef|elif)\b.*\bONEFLOW_WITH_CUDA\b", _read(f), re.M))
    assert count <= MAX_CUDA_IFDEFS, count


def _params(text):
    """A parameter list's types, without names and defaults: `const Tensor& x, int64_t n = 1` ->
    ("const Tensor&", "int64_t")."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<(" or -(ch in ">)")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    types = []
    for p in parts:
        p = re.sub(r"\s+", " ", re.sub(r"=.*", "", p, flags=re.S)).strip()
        if p:
            types.append(re.sub(r"(?<=[\w>*&]) \w+$", "", p).replace(" &", "&").replace(" *", "*"))
    return tuple(types)


_DECLARATION = re.compile(r"^\s*((?:[\w:<>,]+[\s*&]+)+?)(\w+)\(([^;{]*)\)\s*;", re.M | re.S)


def _declarations(files):
    """(name, return type, parameter types) -> file, for the free functions the headers declare."""
    out = {}
    for f in files:
        for ret, name, params in _DECLARATION.findall(_read(f)):
            if ret.strip() not in ("return", "else", "new", "delete"):
                out[(name, re.sub(r"\s+", " ", ret).strip(), _params(params))] = f.name
    return out


def test_each_kernel_interface_is_declared_once():
    """Issue 38 point 3: a kernel interface is declared once, in kernels/ (the tag's Fn); src/cuda
    registers implementations under it and does not declare them again. Flags a function that a
    src/cuda file registers by address and a src/cuda header also declares, a src/cuda header
    function with the signature of the interface of its name (`Scan` ~ ScanKernel's Fn), and a
    function declared in a header of both trees."""
    cuda_headers = sorted((SRC / "cuda").glob("*.h")) + sorted((SRC / "cuda").glob("*.cuh"))
    cuda_decls = _declarations(cuda_headers)
    assert len(cuda_decls) > 20, "the scan found too few declarations"
    registered = set()
    for f in sorted((SRC / "cuda").rglob("*")):
        if f.suffix in (".cu", ".cpp"):
            registered |= set(re.findall(r"RegisterKernel<kernels::\w+>\(\s*DeviceType::kCUDA,\s*&(?:cuda::)?(\w+)",
                                         _read(f)))
    assert registered
    twice = sorted(f"{file}: {name} (registered by address)" for (name, _, _), file in cuda_decls.items()
                   if name in registered)
    interfaces = {}
    for h in _kernel_files("*.h"):
        for tag, ret, params in re.findall(
                r"struct (\w+)Kernel \{.*?using Fn = ([\w:<>, ]+?) ?\(\*\)\((.*?)\);", _read(h), re.S):
            interfaces[(tag, ret.strip(), _params(params))] = h.name
    twice += sorted(f"{file}: {name} (the interface {name}Kernel of kernels/{interfaces[key]})"
                    for key, file in cuda_decls.items() for name in [key[0]] if key in interfaces)
    kernel_decls = _declarations(_kernel_files("*.h"))
    twice += sorted(f"{file}: {key[0]} (also kernels/{kernel_decls[key]})"
                    for key, file in cuda_decls.items() if key in kernel_decls)
    assert twice == []


def test_the_declaration_scan_reads_signatures():
    assert _params("const Tensor& x, int64_t n = 1, std::optional<Tensor> w, bool") == (
        "const Tensor&", "int64_t", "std::optional<Tensor>", "bool")
    assert _params("const std::vector<std::pair<int, int>>& v") == ("const std::vector<std::pair<int, int>>&",)


def test_every_remaining_no_kernel_error_is_a_listed_host_only_step():
    # The registry's dtype sets answer "no kernel" before a call; what still throws the error
    # itself is listed in Note [Host fallback], so that the list stays the whole story.
    note = _read(SRC / "ops" / "host_fallback.h")
    note = note[note.index("// Kernels in the registry"):note.index("#pragma once")]
    throwing = {
        str(f.relative_to(SRC)) for f in SRC.rglob("*")
        if f.suffix in (".h", ".cpp", ".cu", ".cuh") and "OF_THROW_NO_KERNEL(" in _read(f)
    } - {"core/error.h", "kernels/registry.cpp", "ops/host_fallback.h", "api/kernel_registry_bind.cpp"}
    assert throwing, "the scan found no thrower"
    missing = sorted(f for f in throwing if f not in note)
    assert missing == [], f"throw OF_THROW_NO_KERNEL but are not listed in Note [Host fallback]: {missing}"


def test_every_kernel_has_a_cpu_kernel_for_every_dtype():
    registry = flow._C._kernel_registry()
    assert len(registry) >= 60
    for name, per_device in registry.items():
        assert set(map(str, per_device["cpu"])) == set(map(str, ALL_DTYPES)), name
        assert flow._C._kernel_route(name, "cpu", flow.float32) == "kernel"
        # no kernel is registered for meta tensors, and the host fallback is a policy of CUDA only
        assert flow._C._kernel_route(name, "meta", flow.float32) == "no_kernel"
    assert flow._C._kernel_route("no_such_kernel", "cpu", flow.float32) is None
    with pytest.raises(ValueError, match="unknown device type"):
        flow._C._kernel_route("gemm", "tpu", flow.float32)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cuda_routes_per_dtype(dtype, monkeypatch):
    # cuBLAS's GEMM takes no integers and cuDNN only floating point: those dtypes run on host
    # copies in every build; the others on the device where the build has CUDA (and cuDNN). The
    # atomic adds take every dtype.
    floating = dtype in (flow.float16, flow.bfloat16, flow.float32, flow.float64)
    complex_ = dtype in (flow.complex64, flow.complex128)
    registry = flow._C._kernel_registry()
    expect = {
        "gemm": CUDA_BUILD and (floating or complex_),
        "conv_forward": CUDA_BUILD and "cuda" in registry["conv_forward"] and floating,
        "index_add_slices": CUDA_BUILD,  # complex too: one atomic add per component (cuda/atomic.cuh)
        "pad_backward": CUDA_BUILD,
        "sort": CUDA_BUILD,
    }
    for name, on_device in expect.items():
        assert flow._C._kernel_route(name, "cuda", dtype) == ("kernel" if on_device else "host_fallback"), name
    monkeypatch.setenv("ONEFLOW_CUDA_HOST_FALLBACK", "0")
    for name, on_device in expect.items():
        assert flow._C._kernel_route(name, "cuda", dtype) == ("kernel" if on_device else "no_kernel"), name


def test_call_kernel_takes_the_host_fallback_without_an_exception(monkeypatch):
    # The probe's "CUDA" kernel (fills 1) covers float32 only; the CPU kernel fills 0.
    x = flow.full((3,), 7.0, dtype=flow.float32)
    flow._C._kernel_registry_probe(x)
    assert x.tolist() == [1.0, 1.0, 1.0]
    assert flow._C._kernel_route("registry_probe", "cuda", flow.float32) == "kernel"
    for dtype in (flow.int64, flow.float64, flow.complex64):
        y = flow.full((3,), 7, dtype=dtype)
        assert flow._C._kernel_route("registry_probe", "cuda", dtype) == "host_fallback"
        flow._C._kernel_registry_probe(y)  # the CPU kernel ran: nothing raised on the way
        assert y.tolist() == [0, 0, 0]
    monkeypatch.setenv("ONEFLOW_CUDA_HOST_FALLBACK", "0")
    y = flow.full((3,), 7, dtype=flow.int64)
    with pytest.raises(NotImplementedError, match="registry_probe: not implemented for int64 tensors on 'cuda:0'"):
        flow._C._kernel_registry_probe(y)
    assert y.tolist() == [7, 7, 7]


def test_the_op_level_fallback_is_the_registrys_decision(recwarn):
    # OF_KERNEL_CALL compiles in every build (Note [Host fallback]); the probe's entry throws
    # "no kernel for CUDA device 0" on its first call. Without a CUDA backend the registry lets
    # the error stand (nothing retried, no warning); with one the retry runs on host copies and
    # the result moves to the device.
    x = flow.arange(3.0)
    if not CUDA_BUILD:
        with pytest.raises(NotImplementedError, match="host_fallback_probe: a host-only step"):
            flow._C._host_fallback_probe(x)
        assert not [w for w in recwarn if "host_fallback_probe" in str(w.message)]
        return
    y = flow._C._host_fallback_probe(x)
    assert y.device.type == "cuda" and y.cpu().tolist() == [0.0, 1.0, 2.0]
