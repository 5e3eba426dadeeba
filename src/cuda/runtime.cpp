#include "cuda/runtime.h"

#include <cstring>
#include <mutex>
#include <vector>

#include "cuda/check.h"

namespace oneflow::cuda {

int DeviceCount() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();  // no driver / no device: CUDA is unavailable, not an error
      return 0;
    }
    return n;
  }();
  return count;
}

void CheckDeviceIndex(int index) {
  const int n = DeviceCount();
  OF_CHECK(n > 0) << "CUDA is not available: no CUDA device was found (oneflow.cuda.is_available() is False)";
  OF_CHECK(index >= 0 && index < n) << "CUDA error: invalid device ordinal: device cuda:" << index
                                    << " requested, but only " << n << " CUDA device(s) found";
}

int CurrentDevice() {
  int d = 0;
  OF_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void SetDevice(int index) {
  CheckDeviceIndex(index);
  OF_CUDA_CHECK(cudaSetDevice(index));
}

void Synchronize(int index) {
  DeviceGuard g(index < 0 ? CurrentDevice() : index);
  OF_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(Stream(index))));
}

// The legacy default stream: it orders our kernels, cuBLAS/cuDNN calls and copies among
// themselves and with any library that also uses the default stream (DLPack consumers).
void* Stream(int) { return static_cast<void*>(cudaStreamLegacy); }

DeviceGuard::DeviceGuard(int index) : prev_(-1) {
  int cur = CurrentDevice();
  if (cur != index) {
    SetDevice(index);
    prev_ = cur;
  }
}

DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0) (void)cudaSetDevice(prev_);
}

static cudaStream_t S(int device) { return static_cast<cudaStream_t>(Stream(device)); }

// Uploads from pageable memory up to this size go through a pinned staging block.
constexpr size_t kStageBytes = size_t(4) << 20;

void CopyH2D(void* dst, const void* src, size_t n, int device, bool non_blocking) {
  if (n == 0) return;
  DeviceGuard g(device);
  const bool pinned = IsPinned(src);
  if (!pinned && n <= kStageBytes) {
    // Small pageable uploads (the values ops make on the host: index geometry, masks, class
    // weights; small batches) are copied into a cached pinned block and uploaded from there
    // asynchronously: the caller may reuse `src` at once, and the host does not wait for the
    // device's queue to drain. The block is reused only after the upload ran (PinnedFree).
    void* stage = PinnedAlloc(n);
    std::memcpy(stage, src, n);
    const cudaError_t err = cudaMemcpyAsync(dst, stage, n, cudaMemcpyHostToDevice, S(device));
    PinnedFree(stage, n);
    OF_CUDA_CHECK(err);
    return;
  }
  OF_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, S(device)));
  // From pageable memory the copy has been staged by the driver when the call returns only for
  // small sizes: wait, so that the caller may reuse or free `src`.
  if (!(non_blocking && pinned)) OF_CUDA_CHECK(cudaStreamSynchronize(S(device)));
}

void CopyD2H(void* dst, const void* src, size_t n, int device) {
  if (n == 0) return;
  DeviceGuard g(device);
  OF_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, S(device)));
  OF_CUDA_CHECK(cudaStreamSynchronize(S(device)));
}

void CopyD2D(void* dst, const void* src, size_t n, int device) {
  if (n == 0) return;
  DeviceGuard g(device);
  OF_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, S(device)));
}

DeviceInfo GetDeviceInfo(int index) {
  CheckDeviceIndex(index);
  cudaDeviceProp p;
  OF_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  DeviceInfo info;
  info.name = p.name;
  info.major = p.major;
  info.minor = p.minor;
  info.multi_processor_count = p.multiProcessorCount;
  info.total_memory = p.totalGlobalMem;
  return info;
}

void MemGetInfo(int index, size_t* free, size_t* total) {
  DeviceGuard g(index);
  OF_CUDA_CHECK(cudaMemGetInfo(free, total));
}

void CheckLaunch(const char* what) {
  cudaError_t e = cudaGetLastError();
  OF_CHECK(e == cudaSuccess) << "CUDA error: " << cudaGetErrorString(e) << " (launching " << what << ")";
}

}  // namespace oneflow::cuda
