// CPU kernels of embedding and one_hot (kernels/embedding.h).
#include "kernels/embedding.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/parallel.h"

namespace oneflow {

namespace {

void RowsCpu(const Tensor& out, const Tensor& w, const Tensor& idx) {
  const int64_t* ip = idx.data<int64_t>();
  const int64_t row_bytes = w.sizes()[1] * w.element_size();
  const char* src = w.raw_data();
  char* dst = out.raw_data();
  // Rows of a large table are cache misses at random addresses, and one row's copy is too short
  // for the out-of-order window to reach many rows ahead: the first lines of the row kAhead
  // places on are prefetched, so that several misses are in flight at once (DLRM's 26 lookups
  // of 512 rows in 25.6 MB tables: the copies were 12% of its inference step, perf, one thread;
  // a standalone loop of those lookups, both forms interleaved on a loaded machine: 15-25% less
  // time with 8 rows ahead, 10-15% with 16).
  constexpr int64_t kAhead = 8, kLine = 64, kPrefetchBytes = 512;
  const int64_t pf_bytes = std::min(row_bytes, kPrefetchBytes);
  ParallelFor(0, idx.numel(), std::max<int64_t>(1, kGrainSize * 4 / std::max<int64_t>(1, row_bytes)),
              [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (i + kAhead < e) {
        const char* next = src + ip[i + kAhead] * row_bytes;
        for (int64_t off = 0; off < pf_bytes; off += kLine) __builtin_prefetch(next + off);
      }
      std::memcpy(dst + i * row_bytes, src + ip[i] * row_bytes, row_bytes);
    }
  });
}

// Rows of `out` partitioned among threads: each thread adds the contributions that land in its
// own rows, so there are no races and no atomics (the scan of the index list is cheap), and
// repeated indices add up in index order.
void RowsGradCpu(const Tensor& out, const Tensor& g, const Tensor& idx, int64_t pad, bool scale_grad_by_freq) {
  const int64_t num_weights = out.sizes()[0], dim = out.sizes()[1], n = idx.numel();
  const int64_t* ip = idx.data<int64_t>();
  std::vector<int64_t> freq;
  if (scale_grad_by_freq) {
    freq.assign(num_weights, 0);
    for (int64_t i = 0; i < n; ++i) ++freq[ip[i]];
  }
  DispatchFloat(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* gp = g.data<T>();
    T* op = out.data<T>();
    ParallelFor(0, num_weights, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, dim)), [&](int64_t r0, int64_t r1) {
      std::memset(static_cast<void*>(op + r0 * dim), 0, (r1 - r0) * dim * sizeof(T));
      for (int64_t i = 0; i < n; ++i) {
        const int64_t r = ip[i];
        if (r < r0 || r >= r1 || r == pad) continue;
        T* orow = op + r * dim;
        const T* grow = gp + i * dim;
        if (scale_grad_by_freq) {
          const M s = M(1) / static_cast<M>(freq[r]);
          for (int64_t k = 0; k < dim; ++k) orow[k] = static_cast<T>(static_cast<M>(orow[k]) + static_cast<M>(grow[k]) * s);
        } else {
          for (int64_t k = 0; k < dim; ++k) orow[k] = static_cast<T>(static_cast<M>(orow[k]) + static_cast<M>(grow[k]));
        }
      }
    });
  });
}

void OneHotCpu(const Tensor& out, const Tensor& classes, const Scalar& on_value) {
  const int64_t* idx = classes.data<int64_t>();
  const int64_t num_classes = out.sizes()[out.dim() - 1];
  DispatchAll(out.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T on = on_value.To<T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < classes.numel(); ++i) o[i * num_classes + idx[i]] = on;
  });
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::EmbeddingRowsKernel>(DeviceType::kCPU, &RowsCpu);
  kernels::RegisterKernel<kernels::EmbeddingRowsGradKernel>(DeviceType::kCPU, &RowsGradCpu);
  kernels::RegisterKernel<kernels::OneHotScatterKernel>(DeviceType::kCPU, &OneHotCpu);
  return true;
}();

}  // namespace

void EmbeddingRows(const Tensor& out, const Tensor& w, const Tensor& idx) {
  kernels::CallKernel<kernels::EmbeddingRowsKernel>(out.device(), out, w, idx);
}

void EmbeddingRowsGrad(const Tensor& out, const Tensor& g, const Tensor& idx, int64_t pad, bool scale_grad_by_freq) {
  kernels::CallKernel<kernels::EmbeddingRowsGradKernel>(out.device(), out, g, idx, pad, scale_grad_by_freq);
}

void OneHotScatter(const Tensor& out, const Tensor& classes, const Scalar& on_value) {
  kernels::CallKernel<kernels::OneHotScatterKernel>(out.device(), out, classes, on_value);
}

}  // namespace oneflow
