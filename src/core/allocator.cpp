#include "core/allocator.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace oneflow {

namespace {

// Size classes: multiples of 64 bytes up to 4 KiB, then powers of two (<= 2x waste above 4 KiB,
// the usual trade-off). Blocks above 4 GiB are not cached.
constexpr size_t kSmallStep = 64, kSmallMax = 4096;
constexpr int kNumClasses = kSmallMax / kSmallStep + 40;
constexpr size_t kMaxCached = size_t(2) << 30;  // cache at most 2 GiB of free blocks

int SizeClass(size_t n, size_t* rounded) {
  if (n <= kSmallMax) {
    size_t k = (n + kSmallStep - 1) / kSmallStep;
    if (k == 0) k = 1;
    *rounded = k * kSmallStep;
    return static_cast<int>(k - 1);
  }
  int bits = 64 - __builtin_clzll(n - 1);  // next power of two
  *rounded = size_t(1) << bits;
  int c = kSmallMax / kSmallStep + (bits - 12) - 1;
  return c < kNumClasses ? c : -1;
}

struct Cache {
  std::mutex mu;
  std::vector<void*> free[kNumClasses];
  size_t cached = 0;
};
Cache& GetCache() {
  static Cache* c = new Cache();  // leaked on purpose: tensors may die after static destructors
  return *c;
}

std::atomic<uint64_t> g_alloc_calls{0};

}  // namespace

uint64_t CpuAllocCalls() { return g_alloc_calls.load(std::memory_order_relaxed); }

void* CpuAlloc(size_t nbytes) {
  g_alloc_calls.fetch_add(1, std::memory_order_relaxed);
  size_t rounded;
  int c = SizeClass(nbytes, &rounded);
  Cache& cache = GetCache();
  if (c >= 0) {
    std::lock_guard<std::mutex> g(cache.mu);
    auto& l = cache.free[c];
    if (!l.empty()) {
      void* p = l.back();
      l.pop_back();
      cache.cached -= rounded;
      return p;
    }
  } else {
    rounded = (nbytes + 63) / 64 * 64;
  }
  void* p = nullptr;
  if (posix_memalign(&p, 64, rounded) != 0 || p == nullptr) {
    CpuEmptyCache();  // retry once without the cache's blocks
    if (posix_memalign(&p, 64, rounded) != 0 || p == nullptr) {
      OF_THROW(kRuntime) << "CPU out of memory: tried to allocate " << nbytes << " bytes";
    }
  }
  return p;
}

void CpuFree(void* p, size_t nbytes) {
  if (!p) return;
  size_t rounded;
  int c = SizeClass(nbytes, &rounded);
  Cache& cache = GetCache();
  if (c >= 0) {
    std::lock_guard<std::mutex> g(cache.mu);
    if (cache.cached + rounded <= kMaxCached) {
      cache.free[c].push_back(p);
      cache.cached += rounded;
      return;
    }
  }
  std::free(p);
}

void CpuEmptyCache() {
  Cache& cache = GetCache();
  std::lock_guard<std::mutex> g(cache.mu);
  for (auto& l : cache.free) {
    for (void* p : l) std::free(p);
    l.clear();
  }
  cache.cached = 0;
}

size_t CpuCachedBytes() {
  Cache& cache = GetCache();
  std::lock_guard<std::mutex> g(cache.mu);
  return cache.cached;
}

}  // namespace oneflow
