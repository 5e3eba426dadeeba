#include "core/allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/error.h"

namespace oneflow {

namespace {

// Size classes: multiples of 64 bytes up to 4 KiB, then powers of two (<= 2x waste above 4 KiB,
// the usual trade-off). Blocks above 4 GiB are not cached.
constexpr size_t kSmallStep = 64, kSmallMax = 4096;
constexpr int kNumClasses = kSmallMax / kSmallStep + 40;
constexpr size_t kMaxCached = size_t(2) << 30;  // cache at most 2 GiB of free blocks
// Blocks of this class size and above are "large": their resident pages are tracked and may be
// given back (Note [Resident cap]).
constexpr size_t kLargeBlock = size_t(1) << 20;

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

// Note [Resident cap]
// A cached free block keeps its pages resident: a training step that frees its activations in the
// backward while it allocates gradients of other size classes holds both at once (GPT-2 small:
// 939 MB of free blocks at the end of the backward, the process's peak). A non-caching
// allocator's resident set never exceeds the most bytes live at once; ours is held to that plus a
// sixteenth: whenever the large blocks' resident bytes (live and free) would exceed
//     cap = peak + peak / 16,   peak = the most bytes of large blocks live at once so far,
// free large blocks give their pages back (madvise(MADV_DONTNEED), largest first) until they fit.
// A given-back block stays cached, its address and size class intact; its next user takes
// zero-filled page faults (PyTorch's CPU allocator, glibc's mmap for large blocks, takes them on
// every use). The slack trades peak memory for faults: GPT-2 small, 3 AdamW steps
// (benchmarks/memory_profile.py, docs/benchmarks.md): no cap 3023 MB peak, ~20k page faults in
// the third step; peak / 8: 2918 MB, 75k; peak / 16: 2756 MB, 136k; peak / 32: 2675 MB, 248k;
// no slack: 2634 MB, 255k; PyTorch 3040 MB, 413k. "Resident" is counted as what the block's
// users asked for (the most of any use since its last give-back), not the pages they touched.
constexpr size_t kCapSlackDivisor = 16;

struct FreeBlock {
  void* p;
  size_t resident;  // bytes counted resident (large blocks; small ones: their size, never given back)
};

struct Cache {
  std::mutex mu;
  std::vector<FreeBlock> free[kNumClasses];
  CpuAllocStats st;  // the byte counts: free blocks held, and the large blocks' (Note [Resident cap])
  std::unordered_map<void*, size_t> live_resident;  // live large block -> resident bytes
  size_t live_resident_sum = 0;
};
Cache& GetCache() {
  static Cache* c = new Cache();  // leaked on purpose: tensors may die after static destructors
  return *c;
}

std::atomic<uint64_t> g_alloc_calls{0};

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Gives back the whole pages of [p, p + n). The partial pages at the ends stay: the first may hold
// malloc's chunk header.
void GiveBack(void* p, size_t n) {
  const size_t page = PageSize();
  const uintptr_t b = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
}

// Under cache.mu: gives back free large blocks until the resident bytes fit the cap.
void FitCap(Cache& cache) {
  static const int first_large = [] {
    size_t r;
    return SizeClass(kLargeBlock, &r);
  }();
  if (cache.st.free_resident == 0) return;
  const size_t cap = cache.st.peak_live_large + cache.st.peak_live_large / kCapSlackDivisor;
  const size_t live_resident = cache.live_resident_sum;
  for (int c = kNumClasses - 1; c >= first_large && live_resident + cache.st.free_resident > cap; --c) {
    for (FreeBlock& b : cache.free[c]) {
      if (b.resident == 0) continue;
      GiveBack(b.p, b.resident);
      cache.st.free_resident -= b.resident;
      cache.st.given_back += b.resident;
      b.resident = 0;
      if (live_resident + cache.st.free_resident <= cap) break;
    }
  }
}

// Under cache.mu: a large block of `nbytes` asked for goes live, `resident` bytes already resident.
void TrackLive(Cache& cache, void* p, size_t nbytes, size_t resident) {
  const size_t r = std::max(resident, nbytes);
  cache.live_resident[p] = r;
  cache.live_resident_sum += r;
  cache.st.live_large += nbytes;
  cache.st.peak_live_large = std::max(cache.st.peak_live_large, cache.st.live_large);
  FitCap(cache);
}

// Pops the block of class c to reuse: the one with the most resident bytes (fewest page faults).
FreeBlock PopBest(std::vector<FreeBlock>& l) {
  size_t best = l.size() - 1;
  for (size_t i = l.size(); i-- > 0;)
    if (l[i].resident > l[best].resident) best = i;
  FreeBlock b = l[best];
  l[best] = l.back();
  l.pop_back();
  return b;
}

}  // namespace

uint64_t CpuAllocCalls() { return g_alloc_calls.load(std::memory_order_relaxed); }

void* CpuAlloc(size_t nbytes) {
  g_alloc_calls.fetch_add(1, std::memory_order_relaxed);
  size_t rounded;
  int c = SizeClass(nbytes, &rounded);
  const bool large = c >= 0 && rounded >= kLargeBlock;
  Cache& cache = GetCache();
  if (c >= 0) {
    std::lock_guard<std::mutex> g(cache.mu);
    auto& l = cache.free[c];
    if (!l.empty()) {
      const FreeBlock b = large ? PopBest(l) : l.back();
      if (!large) l.pop_back();
      cache.st.cached -= rounded;
      if (large) {
        cache.st.free_resident -= b.resident;
        TrackLive(cache, b.p, nbytes, b.resident);
      }
      return b.p;
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
  if (large) {
    std::lock_guard<std::mutex> g(cache.mu);
    TrackLive(cache, p, nbytes, 0);
  }
  return p;
}

void CpuFree(void* p, size_t nbytes) {
  if (!p) return;
  size_t rounded;
  int c = SizeClass(nbytes, &rounded);
  const bool large = c >= 0 && rounded >= kLargeBlock;
  Cache& cache = GetCache();
  if (c >= 0) {
    std::lock_guard<std::mutex> g(cache.mu);
    size_t resident = rounded;
    if (large) {
      auto it = cache.live_resident.find(p);
      resident = it->second;
      cache.live_resident_sum -= resident;
      cache.live_resident.erase(it);
      cache.st.live_large -= nbytes;
    }
    if (cache.st.cached + rounded <= kMaxCached) {
      cache.free[c].push_back({p, resident});
      cache.st.cached += rounded;
      if (large) cache.st.free_resident += resident;
      return;
    }
  }
  std::free(p);
}

void CpuEmptyCache() {
  Cache& cache = GetCache();
  std::lock_guard<std::mutex> g(cache.mu);
  for (auto& l : cache.free) {
    for (const FreeBlock& b : l) std::free(b.p);
    l.clear();
  }
  cache.st.cached = 0;
  cache.st.free_resident = 0;
}

size_t CpuCachedBytes() {
  Cache& cache = GetCache();
  std::lock_guard<std::mutex> g(cache.mu);
  return cache.st.cached;
}

CpuAllocStats CpuAllocatorStats() {
  Cache& cache = GetCache();
  std::lock_guard<std::mutex> g(cache.mu);
  return cache.st;
}

}  // namespace oneflow
