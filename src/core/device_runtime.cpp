// Note [Device runtime] (core/device_runtime.h): the table's slot.
#include "core/device_runtime.h"

#include <atomic>

#include "core/device.h"
#include "core/error.h"

namespace oneflow {

namespace {
// Constant-initialised (null) before any static initialiser runs, so the registration at load
// never races the zeroing.
std::atomic<const DeviceRuntime*> cuda_runtime{nullptr};
}  // namespace

const DeviceRuntime* CudaRuntime() { return cuda_runtime.load(std::memory_order_acquire); }

const DeviceRuntime& RequireCudaRuntime(const Device& device) {
  const DeviceRuntime* rt = CudaRuntime();
  OF_CHECK(rt != nullptr) << "device '" << device.str()
                          << "' is not available: this build of oneflow has no CUDA support "
                             "(flow.cuda.is_available() is False)";
  return *rt;
}

void RegisterCudaRuntime(const DeviceRuntime* runtime) { cuda_runtime.store(runtime, std::memory_order_release); }

}  // namespace oneflow
