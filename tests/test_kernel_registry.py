"""The kernel registry's rules (Note [Kernel registry], src/kernels/registry.h), checked on the
sources: they hold in every build, CPU-only included, where the CUDA half is never compiled.

- every kernel interface (a tag struct with `kName` in src/kernels/*.h) has a CPU kernel
  registered from src/kernels/*.cpp, and every registration names a declared interface;
- every src/cuda Register*Kernels() is called by cuda::RegisterKernels() (src/cuda/registry.cpp),
  which is what keeps the .cu objects in the link;
- src/kernels/ includes no cuda/ header beyond the files not yet moved to the registry, and the
  number of `#ifdef ONEFLOW_WITH_CUDA` outside src/cuda/ does not grow (one: the op-level host
  fallback's OF_KERNEL_CALL, ops/host_fallback.h); the registry itself has none (a backend names
  its registration function through kernels/device_registrar.h).
"""
import pathlib
import re

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"

# Files of src/kernels/ that still include a cuda/ header: remove a file from this list when it
# moves to the registry (the test fails while a listed file no longer includes one).
KERNELS_STILL_INCLUDING_CUDA = {"functors.h"}
# `#ifdef ONEFLOW_WITH_CUDA` lines outside src/cuda/: 149 before the registry. Lower it when a file
# moves; it must never grow.
MAX_CUDA_IFDEFS = 1


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
    including = {
        f.name for f in (SRC / "kernels").rglob("*") if f.suffix in (".h", ".cpp") and '#include "cuda/' in _read(f)
    }
    assert including == KERNELS_STILL_INCLUDING_CUDA
    count = 0
    for f in SRC.rglob("*"):
        if f.suffix not in (".h", ".cpp") or "cuda" in f.relative_to(SRC).parts[:1]:
            continue
        count += len(re.findall(r"^#ifdef ONEFLOW_WITH_CUDA\b", _read(f), re.M))
    assert count <= MAX_CUDA_IFDEFS, count
