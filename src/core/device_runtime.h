// Note [Device runtime]: what core and the copy kernel need of an accelerator's runtime
// (allocation, a device-to-host copy for item(), pinned host memory, copies with a device side),
// as one table of functions that the device's folder fills at load: src/cuda/device_runtime.cpp,
// through a static initialiser of src/cuda/registry.cpp (the object the kernel registry's explicit
// call keeps in the link, Note [Kernel registry]). It is needed from the first allocation, before
// any kernel lookup, hence at load rather than with the kernels. A build without CUDA leaves it
// null: CudaRuntime() answers nullptr and RequireCudaRuntime() raises "no CUDA support", so no
// call site needs an #ifdef.
#pragma once
#include <cstddef>

namespace oneflow {

struct Device;
class Tensor;

struct DeviceRuntime {
  int (*device_count)();                  // 0 when there is no driver or no device; never throws
  void (*check_device)(int index);        // the RuntimeError naming a device that does not exist
  void* (*alloc)(size_t nbytes, int index);
  void (*free)(void* p, size_t nbytes, int index);
  void (*copy_to_host)(void* dst, const void* src, size_t nbytes, int index);  // waits for the bytes
  void* (*pinned_alloc)(size_t nbytes);   // page-locked host memory
  void (*pinned_free)(void* p, size_t nbytes);
  bool (*is_pinned)(const void* p);
  void (*copy)(const Tensor& dst, const Tensor& src);  // CopyInto with a device tensor on a side
};

// The CUDA runtime of this build, nullptr without CUDA.
const DeviceRuntime* CudaRuntime();
// The same, or the RuntimeError saying that this build has no CUDA support, naming `device`.
const DeviceRuntime& RequireCudaRuntime(const Device& device);
// Called once at load by the CUDA folder (src/cuda/device_runtime.cpp).
void RegisterCudaRuntime(const DeviceRuntime* runtime);

}  // namespace oneflow
