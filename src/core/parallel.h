// Intra-op parallelism on OpenMP (the runtime OpenBLAS also uses, so one knob sets both).
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace oneflow {

constexpr int64_t kGrainSize = 32768;  // below this many elements, threading costs more than it saves

int GetNumThreads();
void SetNumThreads(int n);

// Calls f(begin, end) on disjoint chunks of [begin, end), in parallel when the range is large.
template <typename F>
void ParallelFor(int64_t begin, int64_t end, int64_t grain, const F& f) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int nt = GetNumThreads();
  if (nt <= 1 || n <= grain || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  const int64_t chunks = std::min<int64_t>(nt, (n + grain - 1) / grain);
#pragma omp parallel num_threads(static_cast<int>(chunks))
  {
    const int64_t t = omp_get_thread_num(), per = (n + chunks - 1) / chunks;
    const int64_t b = begin + t * per, e = std::min(end, b + per);
    if (b < e) f(b, e);
  }
}

}  // namespace oneflow
