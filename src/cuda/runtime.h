// The CUDA device runtime as host code sees it (no CUDA headers here, so that any .cpp may call
// it): devices, the compute stream, the caching allocator, copies between host and device.
// Built only with ONEFLOW_CUDA (the macro ONEFLOW_WITH_CUDA); docs/cuda.md.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace oneflow::cuda {

int DeviceCount();  // 0 when there is no driver or no device; never throws
int CurrentDevice();
void SetDevice(int index);
// index < 0: the current device.
void Synchronize(int index);
// The one compute stream of a device (cudaStream_t). Every kernel, library call and copy of the
// framework runs on it, so work is ordered without events and freed memory can be reused at once.
void* Stream(int index);
// Raises the RuntimeError naming a device that does not exist.
void CheckDeviceIndex(int index);

// Makes `index` current for the scope (kernels launch on the current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();

 private:
  int prev_;
};

// Caching allocator (allocator.cpp).
void* Alloc(size_t nbytes, int device);
void Free(void* p, size_t nbytes, int device);
void EmptyCache();
struct MemoryStats {
  int64_t allocated = 0, max_allocated = 0;  // bytes in live tensors (rounded to their bins)
  int64_t reserved = 0, max_reserved = 0;    // bytes taken from the driver (live + cached)
  int64_t alloc_count = 0, free_count = 0, cache_hits = 0, retries = 0, ooms = 0;
};
MemoryStats GetMemoryStats(int device);
void ResetPeakStats(int device);
// Page-locked host memory for asynchronous uploads (cached like device memory).
void* PinnedAlloc(size_t nbytes);
void PinnedFree(void* p, size_t nbytes);
bool IsPinned(const void* p);

// Copies of contiguous bytes on the device's stream. Host-to-device from pageable memory and
// device-to-host return when the bytes have arrived; `non_blocking` uploads from pinned memory
// return at once.
void CopyH2D(void* dst, const void* src, size_t n, int device, bool non_blocking);
void CopyD2H(void* dst, const void* src, size_t n, int device);
void CopyD2D(void* dst, const void* src, size_t n, int device);

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0, multi_processor_count = 0;
  size_t total_memory = 0;
};
DeviceInfo GetDeviceInfo(int index);
void MemGetInfo(int index, size_t* free, size_t* total);

// After a kernel launch: turns a launch error into a RuntimeError naming `what`.
void CheckLaunch(const char* what);

}  // namespace oneflow::cuda
