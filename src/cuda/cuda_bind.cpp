// flow._C._cuda_*: what python/oneflow/cuda answers from (device queries, synchronisation, the
// caching allocator's statistics, the TF32 switches, cuDNN's version). Only a CUDA build compiles
// this file (into the module: it registers itself, Note [Binding registry]); without it flow._C has
// none of them, and oneflow.cuda then says that CUDA is not compiled in.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "cuda/blas.h"
#include "cuda/conv.h"
#include "cuda/runtime.h"
#include "kernels/device_registrar.h"
#include "ops/copy.h"
#include "ops/host_fallback.h"

namespace nb = nanobind;

namespace oneflow {

namespace cuda {
void RegisterKernels();  // cuda/registry.cpp: every .cu's registrations
void RegisterTablePointwise();  // generated: cuda_register.cu
void RegisterReductions();      // cuda/reduce.cu
void RegisterOptimizerUpdates();  // cuda/optim.cu
}

namespace {
int Index(nb::handle device) {
  return device.is_none() ? cuda::CurrentDevice() : nb::cast<int>(device);
}

// Note [Host fallback]: the once-per-op notice is a Python UserWarning (an error under
// `-W error`, which then propagates out of the op like any other exception).
void WarnFallback(const char* message) {
  nb::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_UserWarning, message, 1) < 0) throw nb::python_error();
}

// Note [Kernel registry]: the CUDA kernels enter the registry before the first lookup for a CUDA
// device (kernels/device_registrar.h); this reference also keeps cuda/registry.cpp in the link.
const kernels::DeviceKernels kCudaKernels(DeviceType::kCUDA, &cuda::RegisterKernels);
}  // namespace

void BindCuda(nb::module_& m) {
  cuda::RegisterTablePointwise();
  cuda::RegisterReductions();
  cuda::RegisterOptimizerUpdates();
  host_fallback::SetReporter(&WarnFallback);
  m.def("_cuda_forget_fallback_warnings", [] { host_fallback::ForgetReported(); });
  m.def("_cuda_version", [] {  // the toolkit built against (oneflow.version.cuda)
    return std::to_string(ONEFLOW_CUDA_VERSION_MAJOR) + "." + std::to_string(ONEFLOW_CUDA_VERSION_MINOR);
  });
  m.def("_cuda_current_device", [] { return cuda::CurrentDevice(); });
  m.def("_cuda_set_device", [](int i) { cuda::SetDevice(i); });
  m.def("_cuda_synchronize", [](nb::handle d) {
    nb::gil_scoped_release r;
    cuda::Synchronize(d.is_none() ? -1 : nb::cast<int>(d));
  }, nb::arg("device").none());
  m.def("_cuda_device_name", [](nb::handle d) { return cuda::GetDeviceInfo(Index(d)).name; }, nb::arg("device").none());
  m.def("_cuda_device_capability", [](nb::handle d) {
    auto i = cuda::GetDeviceInfo(Index(d));
    return std::make_tuple(i.major, i.minor);
  }, nb::arg("device").none());
  m.def("_cuda_device_properties", [](nb::handle d) {
    auto i = cuda::GetDeviceInfo(Index(d));
    nb::dict p;
    p["name"] = i.name;
    p["major"] = i.major;
    p["minor"] = i.minor;
    p["total_memory"] = i.total_memory;
    p["multi_processor_count"] = i.multi_processor_count;
    return p;
  }, nb::arg("device").none());
  m.def("_cuda_bf16_supported", [] { return cuda::GetDeviceInfo(cuda::CurrentDevice()).major >= 8; });
  m.def("_cuda_empty_cache", [] { cuda::EmptyCache(); });
  auto stat = [&m](const char* name, int64_t cuda::MemoryStats::*field) {
    m.def(name, [field](nb::handle d) { return cuda::GetMemoryStats(Index(d)).*field; }, nb::arg("device").none());
  };
  stat("_cuda_memory_allocated", &cuda::MemoryStats::allocated);
  stat("_cuda_max_memory_allocated", &cuda::MemoryStats::max_allocated);
  stat("_cuda_memory_reserved", &cuda::MemoryStats::reserved);
  stat("_cuda_max_memory_reserved", &cuda::MemoryStats::max_reserved);
  m.def("_cuda_memory_stats", [](nb::handle d) {
    auto s = cuda::GetMemoryStats(Index(d));
    nb::dict r;
    r["allocated_bytes.all.current"] = s.allocated;
    r["allocated_bytes.all.peak"] = s.max_allocated;
    r["reserved_bytes.all.current"] = s.reserved;
    r["reserved_bytes.all.peak"] = s.max_reserved;
    r["allocation.all.allocated"] = s.alloc_count;
    r["allocation.all.freed"] = s.free_count;
    r["num_alloc_retries"] = s.retries;
    r["num_ooms"] = s.ooms;
    r["cache_hits"] = s.cache_hits;
    return r;
  }, nb::arg("device").none());
  m.def("_cuda_reset_peak_memory_stats", [](nb::handle d) { cuda::ResetPeakStats(Index(d)); }, nb::arg("device").none());
  m.def("_cuda_mem_get_info", [](nb::handle d) {
    size_t free = 0, total = 0;
    cuda::MemGetInfo(Index(d), &free, &total);
    return std::make_tuple(free, total);
  }, nb::arg("device").none());
  m.def("_cuda_set_allow_tf32", [](bool b) { cuda::SetAllowTF32(b); });
  m.def("_cuda_allow_tf32", [] { return cuda::AllowTF32(); });
  // Tensor.to("cuda", non_blocking=True) of a pinned, contiguous CPU tensor into `dst` (same dtype).
  m.def("_cuda_upload_async", [](nb::handle dst, nb::handle src) {
    const Tensor& d = ToTensor(dst);
    const Tensor& s = ToTensor(src);
    OF_CHECK(d.device().type == DeviceType::kCUDA && IsPinned(s) && s.is_contiguous() &&
             d.is_contiguous() && d.dtype() == s.dtype() && d.sizes() == s.sizes())
        << "_cuda_upload_async: expects a contiguous CUDA destination and a pinned source of one dtype and shape";
    cuda::CopyH2D(d.raw_ptr(), s.raw_data(), static_cast<size_t>(s.numel() * s.element_size()), d.device().index,
                  /*non_blocking=*/true);
    d.BumpVersion();
  });
  m.def("_cuda_set_cudnn_allow_tf32", [](bool b) { cuda::SetCudnnAllowTF32(b); });
  m.def("_cuda_set_cudnn_benchmark", [](bool b) { cuda::SetCudnnBenchmark(b); });
  m.def("_cuda_cudnn_benchmark", [] { return cuda::CudnnBenchmark(); });
  m.def("_cuda_set_cudnn_deterministic", [](bool b) { cuda::SetCudnnDeterministic(b); });
  m.def("_cuda_cudnn_deterministic", [] { return cuda::CudnnDeterministic(); });
  m.def("_cuda_cudnn_allow_tf32", [] { return cuda::CudnnAllowTF32(); });
  m.def("_cudnn_version", [] { return cuda::CudnnVersion(); });  // -1: built without cuDNN
}
OF_BIND(60, BindCuda);

}  // namespace oneflow
