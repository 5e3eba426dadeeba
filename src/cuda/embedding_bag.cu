// embedding_bag on CUDA (ops/embedding_bag_ops.cpp has the semantics and builds the tables on
// the host, where the indices are range-checked anyway): one thread per (bag, column) walks its
// bag in index order, as the CPU loop does, so sums round the same way; gradients add into a
// float64 buffer with atomics (the CPU accumulates in double too) that the caller casts.
#include <cuda_runtime.h>

#include "cuda/atomic.cuh"
#include "cuda/embedding_bag.h"
#include "cuda/launch.cuh"
#include "cuda/runtime.h"

namespace oneflow::cuda {

namespace {

// out[bag, k]: sum / mean (scale[i] = per-sample weight, inv[bag] = 1 / size or 1) or max.
template <typename T>
__global__ void BagForwardKernel(const T* w, const int64_t* idx, const int64_t* start, const double* scale,
                                 const double* inv, int64_t pad, int64_t count, int64_t dim, bool max, T* out) {
  using M = OpMath<T>;
  OF_GRID_LOOP(e, count * dim) {
    const int64_t bag = e / dim, k = e % dim;
    if (max) {
      int64_t a = -1;
      for (int64_t i = start[bag]; i < start[bag + 1]; ++i) {
        if (idx[i] == pad) continue;
        if (a < 0 || static_cast<M>(w[idx[i] * dim + k]) > static_cast<M>(w[idx[a] * dim + k])) a = i;
      }
      out[e] = a < 0 ? static_cast<T>(M(0)) : w[idx[a] * dim + k];
      continue;
    }
    M acc = M(0);
    for (int64_t i = start[bag]; i < start[bag + 1]; ++i) {
      if (idx[i] == pad) continue;
      acc += static_cast<M>(w[idx[i] * dim + k]) * static_cast<M>(scale[i]);
    }
    out[e] = static_cast<T>(acc * static_cast<M>(inv[bag]));
  }
}

// sum / mean: every (entry, column) adds g[bag, k] * gscale[i] into its weight row.
__global__ void BagBackwardKernel(const double* g, const int64_t* idx, const int64_t* bag_of, const double* gscale,
                                  int64_t pad, int64_t n, int64_t dim, double* acc) {
  OF_GRID_LOOP(e, n * dim) {
    const int64_t i = e / dim, k = e % dim, bag = bag_of[i];
    if (bag < 0 || idx[i] == pad) continue;
    AtomicAdd(acc + idx[i] * dim + k, g[bag * dim + k] * gscale[i]);
  }
}

// max: the gradient of (bag, k) goes to the row of its first maximum.
template <typename T>
__global__ void BagMaxBackwardKernel(const double* g, const T* w, const int64_t* idx, const int64_t* start,
                                     const double* gscale, int64_t pad, int64_t count, int64_t dim, double* acc) {
  using M = OpMath<T>;
  OF_GRID_LOOP(e, count * dim) {
    const int64_t bag = e / dim, k = e % dim;
    int64_t a = -1;
    for (int64_t i = start[bag]; i < start[bag + 1]; ++i) {
      if (idx[i] == pad) continue;
      if (a < 0 || static_cast<M>(w[idx[i] * dim + k]) > static_cast<M>(w[idx[a] * dim + k])) a = i;
    }
    if (a >= 0) AtomicAdd(acc + idx[a] * dim + k, g[e] * gscale[a]);
  }
}

// d loss / d per_sample_weights[i] = <g[bag], w[idx[i]]> (0 outside the bags and for padding).
__global__ void BagSampleGradKernel(const double* g, const double* w, const int64_t* idx, const int64_t* bag_of,
                                    int64_t pad, int64_t n, int64_t dim, double* out) {
  OF_GRID_LOOP(i, n) {
    const int64_t bag = bag_of[i];
    double dot = 0;
    if (bag >= 0 && idx[i] != pad)
      for (int64_t k = 0; k < dim; ++k) dot += g[bag * dim + k] * w[idx[i] * dim + k];
    out[i] = dot;
  }
}

cudaStream_t StreamOf(const Tensor& t) { return static_cast<cudaStream_t>(Stream(t.device().index)); }

}  // namespace

void EmbeddingBagForward(const Tensor& w, const BagTables& b, bool max, const Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceGuard guard(out.device().index);
  DispatchFloat(w.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    BagForwardKernel<T><<<GridFor(n), kGridThreads, 0, StreamOf(out)>>>(
        w.ptr<T>(), b.idx.ptr<int64_t>(), b.start.ptr<int64_t>(), b.scale.ptr<double>(), b.inv.ptr<double>(), b.pad,
        b.count, b.dim, max, out.ptr<T>());
  });
  CheckLaunch("embedding_bag");
}

void EmbeddingBagBackward(const Tensor& g, const Tensor& w, const BagTables& b, bool max, const Tensor& acc) {
  DeviceGuard guard(acc.device().index);
  if (max) {
    const int64_t n = b.count * b.dim;
    if (n == 0) return;
    DispatchFloat(w.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      BagMaxBackwardKernel<T><<<GridFor(n), kGridThreads, 0, StreamOf(acc)>>>(
          g.ptr<double>(), w.ptr<T>(), b.idx.ptr<int64_t>(), b.start.ptr<int64_t>(), b.gscale.ptr<double>(), b.pad,
          b.count, b.dim, acc.ptr<double>());
    });
  } else {
    const int64_t n = b.idx.numel() * b.dim;
    if (n == 0) return;
    BagBackwardKernel<<<GridFor(n), kGridThreads, 0, StreamOf(acc)>>>(
        g.ptr<double>(), b.idx.ptr<int64_t>(), b.bag_of.ptr<int64_t>(), b.gscale.ptr<double>(), b.pad,
        b.idx.numel(), b.dim, acc.ptr<double>());
  }
  CheckLaunch("embedding_bag backward");
}

void EmbeddingBagSampleGrad(const Tensor& g, const Tensor& w, const BagTables& b, const Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceGuard guard(out.device().index);
  BagSampleGradKernel<<<GridFor(n), kGridThreads, 0, StreamOf(out)>>>(
      g.ptr<double>(), w.ptr<double>(), b.idx.ptr<int64_t>(), b.bag_of.ptr<int64_t>(), b.pad, n, b.dim,
      out.ptr<double>());
  CheckLaunch("embedding_bag per_sample_weights backward");
}

}  // namespace oneflow::cuda
