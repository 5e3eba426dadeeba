// Caching device allocator. cudaMalloc/cudaFree synchronise the device and cost tens of
// microseconds, so freed blocks are kept in bins by rounded size and handed out again: a training
// loop's steady state makes no driver call. Sizes are rounded to 512 B below 1 MiB and to 2 MiB
// above, which bounds the waste per block and makes a loop's repeated sizes land in the same bin.
// Reuse is stream-aware by construction: every kernel of a device runs on its one stream
// (runtime.h), so work queued after a free is ordered after the work that used the block.
// Out of memory: the cache is handed back to the driver and the allocation retried once, then a
// RuntimeError names the size (the tensor is never created half-way).
#include <cuda_runtime.h>

#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cuda/check.h"
#include "cuda/runtime.h"

namespace oneflow::cuda {

namespace {

constexpr size_t kSmall = 1 << 20, kSmallRound = 512, kLargeRound = 2 << 20;

size_t RoundSize(size_t n) {
  if (n == 0) n = 1;
  const size_t r = n < kSmall ? kSmallRound : kLargeRound;
  return (n + r - 1) / r * r;
}

struct DevicePool {
  std::unordered_map<size_t, std::vector<void*>> bins;  // rounded size -> cached blocks
  MemoryStats stats;
};

std::mutex mu;
std::vector<DevicePool>& Pools() {
  static std::vector<DevicePool> pools(std::max(DeviceCount(), 1));
  return pools;
}

void ReleaseCached(DevicePool& pool, int device) {
  DeviceGuard g(device);
  for (auto& [size, blocks] : pool.bins) {
    for (void* p : blocks) {
      (void)cudaFree(p);
      pool.stats.reserved -= size;
    }
  }
  pool.bins.clear();
}

// Sizes as PyTorch's messages print them: GiB is the largest unit ("1024.00 GiB").
std::string Bytes(double n) {
  const char* unit[] = {"bytes", "KiB", "MiB", "GiB"};
  int u = 0;
  while (n >= 1024 && u < 3) n /= 1024, ++u;
  char buf[64];
  std::snprintf(buf, sizeof buf, u ? "%.2f %s" : "%.0f %s", n, unit[u]);
  return buf;
}

}  // namespace

void* Alloc(size_t nbytes, int device) {
  const size_t size = RoundSize(nbytes);
  std::lock_guard<std::mutex> lock(mu);
  CheckDeviceIndex(device);
  DevicePool& pool = Pools()[device];
  MemoryStats& s = pool.stats;
  void* p = nullptr;
  auto it = pool.bins.find(size);
  if (it != pool.bins.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    ++s.cache_hits;
  } else {
    DeviceGuard g(device);
    cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      ++s.retries;
      ReleaseCached(pool, device);
      e = cudaMalloc(&p, size);
    }
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      ++s.ooms;
      size_t free = 0, total = 0;
      (void)cudaMemGetInfo(&free, &total);
      OF_THROW(kRuntime) << "CUDA out of memory. Tried to allocate " << Bytes(nbytes) << " (GPU " << device
                         << "; " << Bytes(total) << " total capacity; " << Bytes(s.allocated)
                         << " already allocated; " << Bytes(free) << " free; " << Bytes(s.reserved)
                         << " reserved in total by oneflow)";
    }
    s.reserved += size;
    s.max_reserved = std::max(s.max_reserved, s.reserved);
  }
  ++s.alloc_count;
  s.allocated += size;
  s.max_allocated = std::max(s.max_allocated, s.allocated);
  return p;
}

void Free(void* p, size_t nbytes, int device) {
  if (!p) return;
  const size_t size = RoundSize(nbytes);
  std::lock_guard<std::mutex> lock(mu);
  DevicePool& pool = Pools()[device];
  pool.bins[size].push_back(p);
  pool.stats.allocated -= size;
  ++pool.stats.free_count;
}

void EmptyCache() {
  std::lock_guard<std::mutex> lock(mu);
  for (int d = 0; d < DeviceCount(); ++d) ReleaseCached(Pools()[d], d);
}

MemoryStats GetMemoryStats(int device) {
  std::lock_guard<std::mutex> lock(mu);
  CheckDeviceIndex(device);
  return Pools()[device].stats;
}

void ResetPeakStats(int device) {
  std::lock_guard<std::mutex> lock(mu);
  CheckDeviceIndex(device);
  MemoryStats& s = Pools()[device].stats;
  s.max_allocated = s.allocated;
  s.max_reserved = s.reserved;
}

// ---- pinned host memory: binned the same way (cudaHostAlloc is slower still) ----
namespace {
// A freed pinned block may still be the source of an asynchronous upload: it is cached with an
// event recorded on the current device's stream at the free, and reused only once that event has
// completed (the upload ran before it, on that stream).
struct PinnedBlock {
  void* p;
  cudaEvent_t done;
};
std::unordered_map<size_t, std::vector<PinnedBlock>> pinned_bins;

}  // namespace

void* PinnedAlloc(size_t nbytes) {
  const size_t size = RoundSize(nbytes);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto& bin = pinned_bins[size];
    for (size_t i = 0; i < bin.size(); ++i) {
      if (cudaEventQuery(bin[i].done) != cudaSuccess) continue;
      (void)cudaGetLastError();  // cudaErrorNotReady is not sticky, but leaves no trace either
      void* p = bin[i].p;
      cudaEventDestroy(bin[i].done);
      bin.erase(bin.begin() + static_cast<std::ptrdiff_t>(i));
      return p;
    }
    (void)cudaGetLastError();
  }
  void* p = nullptr;
  OF_CUDA_CHECK(cudaHostAlloc(&p, size, cudaHostAllocDefault));
  return p;
}

void PinnedFree(void* p, size_t nbytes) {
  if (!p) return;
  cudaEvent_t ev = nullptr;
  if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess ||
      cudaEventRecord(ev, static_cast<cudaStream_t>(Stream(CurrentDevice()))) != cudaSuccess) {
    (void)cudaGetLastError();  // no event: wait for the device instead, then cache the block
    if (ev) cudaEventDestroy(ev);
    cudaDeviceSynchronize();
    cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  }
  std::lock_guard<std::mutex> lock(mu);
  pinned_bins[RoundSize(nbytes)].push_back({p, ev});
}

bool IsPinned(const void* p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

}  // namespace oneflow::cuda
