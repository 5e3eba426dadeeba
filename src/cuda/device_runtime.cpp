// The CUDA runtime's table for core and the copy kernel (Note [Device runtime] in
// core/device_runtime.h): cuda/runtime.h's devices, allocator and copies, cuda/copy.h's CopyInto.
#include "core/device_runtime.h"
#include "cuda/copy.h"
#include "cuda/runtime.h"

namespace oneflow::cuda {

namespace {

void CheckDevice(int index) { CheckDeviceIndex(index); }

// Constant-initialised: its address is valid whichever static initialiser runs first.
constexpr DeviceRuntime kRuntime = {
    &DeviceCount, &CheckDevice, &Alloc, &Free, &CopyD2H, &PinnedAlloc, &PinnedFree, &IsPinned, &CopyInto,
};

}  // namespace

void RegisterDeviceRuntime() { RegisterCudaRuntime(&kRuntime); }

}  // namespace oneflow::cuda
