// Updates of whole slices picked by a 1-d index along a dim (ops/index_update_ops.cpp): a
// contiguous tensor seen as [outer, size, inner], slice j of the source going to slice idx[j].
// Repeated indices are applied in index order, as PyTorch's CPU kernels do; threads split the
// outer rows, or the inner elements when there is a single outer row, so no two threads touch
// the same element. index_add's kernel: CPU in kernels/index_slices.cpp, CUDA in
// cuda/index_slices.cpp (Note [Kernel registry]).
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/parallel.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow {

struct Slices {
  int64_t outer = 1, size = 1, inner = 1;
};

// Runs f(o, ib, ie) over outer rows o and inner ranges [ib, ie), split over threads without two
// threads ever sharing an (o, inner) pair.
template <typename F>
void ForSlices(const Slices& s, int64_t n, const F& f) {
  const int64_t work = s.outer * n * s.inner;
  if (s.outer > 1 || s.inner == 1) {
    ParallelFor(0, s.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n * s.inner)),
                [&](int64_t b, int64_t e) {
                  for (int64_t o = b; o < e; ++o) f(o, int64_t(0), s.inner);
                });
    return;
  }
  ParallelFor(0, s.inner, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n)),
              [&](int64_t b, int64_t e) { f(int64_t(0), b, e); });
  (void)work;
}

// self (contiguous) slices index[j] <- op(that, source slice j).
template <typename T, typename Op>
void SliceUpdate(const Tensor& self, const Slices& s, const Tensor& idx, const Tensor& src, const Op& op) {
  const int64_t n = idx.numel();
  const int64_t* ix = idx.data<int64_t>();
  T* sp = self.data<T>();
  const T* rp = src.data<T>();
  ForSlices(s, n, [&](int64_t o, int64_t ib, int64_t ie) {
    for (int64_t j = 0; j < n; ++j) {
      T* dst = sp + (o * s.size + ix[j]) * s.inner;
      const T* from = rp + (o * n + j) * s.inner;
      for (int64_t i = ib; i < ie; ++i) dst[i] = op(dst[i], from[i]);
    }
  });
}

// self (contiguous) slices idx[j] += alpha * source (contiguous) slice j; idx int64 contiguous
// in [0, size) on self's device (bool: or).
void IndexAddSlices(const Tensor& self, const Slices& s, const Tensor& idx, const Tensor& src, const Scalar& alpha);

namespace kernels {
struct IndexAddSlicesKernel {
  static constexpr const char* kName = "index_add_slices";
  using Fn = void (*)(const Tensor& self, const Slices& s, const Tensor& idx, const Tensor& src, const Scalar& alpha);
  using Writes = KernelWrites<0>;
};
}  // namespace kernels

}  // namespace oneflow
