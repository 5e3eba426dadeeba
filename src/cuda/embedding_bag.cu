// embedding_bag on CUDA (kernels/embedding_bag.h; ops/embedding_bag_ops.cpp has the semantics and
// makes the bags on the host, where the indices are range-checked anyway): one thread per
// (bag, column) walks its bag in index order, as the CPU loop does, so sums round the same way; gradients add into a
// float64 buffer with atomics (the CPU accumulates in double too) that the caller casts.
#include <cuda_runtime.h>

#include <vector>

#include "cuda/atomic.cuh"
#include "cuda/embedding_bag.h"
#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "kernels/embedding_bag.h"
#include "ops/copy.h"

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

// The registry's entries (kernels/embedding_bag.h): the host bags uploaded as tables.
namespace oneflow::cuda {

namespace {

// The device tables of cuda/embedding_bag.h, with the CPU loops' factors.
BagTables Upload(const EmbeddingBags& b, bool scale_grad_by_freq, bool for_grad, const Device& d) {
  BagTables t;
  t.pad = b.pad;
  t.count = b.count;
  t.dim = b.dim;
  t.idx = VectorTensor(b.idx, d);
  t.start = VectorTensor(b.start, d);
  if (!for_grad) {  // the forward reads the per-sample weights and 1 / bag size
    std::vector<double> inv(b.count, 1.0);
    if (b.mode == BagMode::kMean)
      for (int64_t bag = 0; bag < b.count; ++bag) {
        const int64_t n = BagSize(b, bag);
        inv[bag] = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
      }
    t.scale = VectorTensor(b.psw, d);
    t.inv = VectorTensor(inv, d);
    return t;
  }
  // The gradients read each entry's bag and factor (weight / frequency / bag size).
  std::vector<int64_t> bag_of(b.idx.size(), -1), freq(scale_grad_by_freq ? b.rows : 0, 0);
  std::vector<double> gscale(b.idx.size(), 0.0);
  for (int64_t i : b.idx)
    if (scale_grad_by_freq) ++freq[i];
  for (int64_t bag = 0; bag < b.count; ++bag) {
    const int64_t n = BagSize(b, bag);
    for (int64_t i = b.start[bag]; i < b.start[bag + 1]; ++i) {
      bag_of[i] = bag;
      double s = b.psw[i] / (scale_grad_by_freq ? static_cast<double>(freq[b.idx[i]]) : 1.0);
      if (b.mode == BagMode::kMean) s /= static_cast<double>(n);
      gscale[i] = s;
    }
  }
  t.bag_of = VectorTensor(bag_of, d);
  t.gscale = VectorTensor(gscale, d);
  return t;
}

void Forward(const Tensor& w, const EmbeddingBags& b, const Tensor& out) {
  EmbeddingBagForward(w, Upload(b, false, false, out.device()), b.mode == BagMode::kMax, out);
}

void WeightGrad(const Tensor& g, const Tensor& w, const EmbeddingBags& b, bool scale_grad_by_freq, const Tensor& acc) {
  FillWith(acc, Scalar(0.0));  // the kernel adds into it
  EmbeddingBagBackward(g, w, Upload(b, scale_grad_by_freq, true, acc.device()), b.mode == BagMode::kMax, acc);
}

void SampleWeightGrad(const Tensor& g, const Tensor& w, const EmbeddingBags& b, const Tensor& acc) {
  EmbeddingBagSampleGrad(g, w, Upload(b, false, true, acc.device()), acc);
}

}  // namespace

// Note [Kernel registry]: called once by cuda::RegisterKernels (cuda/registry.cpp).
void RegisterEmbeddingBagKernels() {
  kernels::RegisterKernel<kernels::EmbeddingBagForwardKernel>(DeviceType::kCUDA, &Forward);
  kernels::RegisterKernel<kernels::EmbeddingBagWeightGradKernel>(DeviceType::kCUDA, &WeightGrad);
  kernels::RegisterKernel<kernels::EmbeddingBagSampleWeightGradKernel>(DeviceType::kCUDA, &SampleWeightGrad);
}

}  // namespace oneflow::cuda
