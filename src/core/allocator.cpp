#include "core/allocator.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace oneflow {

namespace {

// Note [Size classes]
// Multiples of 64 bytes up to 4 KiB; powers of two up to 1 MiB (<= 2x rounding, little in
// bytes); above 1 MiB quarter octaves (1.25, 1.5, 1.75, 2 x 2^k: <= 25% rounding). Whole-model
// peaks are made of the large blocks (GPT-2's logits, attention scores, BERT's activations):
// rounding a 33 MiB request to 64 MiB, then reusing that block for a 60 MiB one, kept ~250 MB
// more resident than needed at GPT-2's peak, while not caching large blocks at all gives them
// back to the kernel at every free (mmap / munmap, then page faults on every step: +3% step
// time). Quarter octaves keep the reuse and most of the saving. Blocks above 4 GiB are not cached.
constexpr size_t kSmallStep = 64, kSmallMax = 4096;
constexpr int kPow2FirstBits = 13, kPow2LastBits = 20;  // 8 KiB .. 1 MiB
constexpr int kQuarterFirstBits = kPow2LastBits + 1, kQuarterLastBits = 32;  // .. 4 GiB
constexpr int kNumSmall = kSmallMax / kSmallStep;
constexpr int kNumPow2 = kPow2LastBits - kPow2FirstBits + 1;
constexpr int kNumClasses = kNumSmall + kNumPow2 + 4 * (kQuarterLastBits - kQuarterFirstBits + 1);
constexpr size_t kMaxCached = size_t(2) << 30;  // cache at most 2 GiB of free blocks

// The class of an n-byte block and its rounded size; -1 when it is not cached.
int SizeClass(size_t n, size_t* rounded) {
  if (n <= kSmallMax) {
    size_t k = (n + kSmallStep - 1) / kSmallStep;
    if (k == 0) k = 1;
    *rounded = k * kSmallStep;
    return static_cast<int>(k - 1);
  }
  const int bits = 64 - __builtin_clzll(n - 1);  // 2^(bits-1) < n <= 2^bits
  if (bits <= kPow2LastBits) {
    *rounded = size_t(1) << bits;
    return kNumSmall + (bits - kPow2FirstBits);
  }
  if (bits > kQuarterLastBits) return -1;
  const size_t quarter = size_t(1) << (bits - 3);
  const size_t k = (n + quarter - 1) / quarter;  // 5..8 quarters of 2^(bits-1)
  *rounded = k * quarter;
  return kNumSmall + kNumPow2 + 4 * (bits - kQuarterFirstBits) + static_cast<int>(k - 5);
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
