// CPU kernels of embedding_bag (kernels/embedding_bag.h): bags spread over threads in the
// forward, weight rows in the gradient (each thread walks every entry in order and keeps its
// rows, so sums round the same way on every run); gradients accumulate in double.
#include "kernels/embedding_bag.h"

#include <algorithm>
#include <type_traits>

#include "core/dtype.h"
#include "core/parallel.h"

namespace oneflow {

namespace {

// For mode 'max': per bag and embedding column, the position (in idx) of the largest value, -1
// for an empty bag. The first maximum wins.
std::vector<int64_t> ArgMax(const EmbeddingBags& b, const Tensor& w) {
  std::vector<int64_t> arg(b.count * b.dim, -1);
  DispatchFloat(w.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* wp = w.data<T>();
    for (int64_t bag = 0; bag < b.count; ++bag)
      for (int64_t i = b.start[bag]; i < b.start[bag + 1]; ++i) {
        if (b.idx[i] == b.pad) continue;
        for (int64_t k = 0; k < b.dim; ++k) {
          int64_t& a = arg[bag * b.dim + k];
          if (a < 0 || static_cast<M>(wp[b.idx[i] * b.dim + k]) > static_cast<M>(wp[b.idx[a] * b.dim + k])) a = i;
        }
      }
  });
  return arg;
}

void ForwardCpu(const Tensor& w, const EmbeddingBags& b, const Tensor& out) {
  const std::vector<int64_t> arg = b.mode == BagMode::kMax ? ArgMax(b, w) : std::vector<int64_t>();
  DispatchFloat(w.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* wp = w.data<T>();
    T* op = out.data<T>();
    ParallelFor(0, b.count, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, b.dim)), [&](int64_t b0, int64_t b1) {
      std::vector<M> acc(b.dim);
      for (int64_t bag = b0; bag < b1; ++bag) {
        T* orow = op + bag * b.dim;
        if (b.mode == BagMode::kMax) {
          for (int64_t k = 0; k < b.dim; ++k) {
            const int64_t a = arg[bag * b.dim + k];
            orow[k] = a < 0 ? static_cast<T>(M(0)) : wp[b.idx[a] * b.dim + k];
          }
          continue;
        }
        std::fill(acc.begin(), acc.end(), M(0));
        for (int64_t i = b.start[bag]; i < b.start[bag + 1]; ++i) {
          if (b.idx[i] == b.pad) continue;
          const T* row = wp + b.idx[i] * b.dim;
          const M s = static_cast<M>(b.psw[i]);
          for (int64_t k = 0; k < b.dim; ++k) acc[k] += static_cast<M>(row[k]) * s;
        }
        const int64_t n = b.mode == BagMode::kMean ? BagSize(b, bag) : 1;
        const M inv = n > 0 ? M(1) / static_cast<M>(n) : M(0);
        for (int64_t k = 0; k < b.dim; ++k) orow[k] = static_cast<T>(acc[k] * inv);
      }
    });
  });
}

void WeightGradCpu(const Tensor& g, const Tensor& w, const EmbeddingBags& b, bool scale_grad_by_freq,
                   const Tensor& acc) {
  const std::vector<int64_t> arg = b.mode == BagMode::kMax ? ArgMax(b, w) : std::vector<int64_t>();
  std::vector<int64_t> freq(b.rows, 0);
  for (int64_t i : b.idx) ++freq[i];
  // Each contribution: (position i in idx, bag, column range) -> grad rows.
  std::vector<int64_t> bag_of(b.idx.size(), -1), bag_size(b.count);
  for (int64_t bag = 0; bag < b.count; ++bag) {
    bag_size[bag] = BagSize(b, bag);
    for (int64_t i = b.start[bag]; i < b.start[bag + 1]; ++i) bag_of[i] = bag;
  }
  double* ap = acc.data<double>();
  const double* gp = g.data<double>();
  ParallelFor(0, b.rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, b.dim)), [&](int64_t r0, int64_t r1) {
    std::fill(ap + r0 * b.dim, ap + r1 * b.dim, 0.0);
    for (size_t i = 0; i < b.idx.size(); ++i) {
      const int64_t r = b.idx[i], bag = bag_of[i];
      if (r < r0 || r >= r1 || r == b.pad || bag < 0) continue;
      double s = b.psw[i] / (scale_grad_by_freq ? static_cast<double>(freq[r]) : 1.0);
      if (b.mode == BagMode::kMean) s /= static_cast<double>(bag_size[bag]);
      for (int64_t k = 0; k < b.dim; ++k) {
        if (b.mode == BagMode::kMax && arg[bag * b.dim + k] != static_cast<int64_t>(i)) continue;
        ap[r * b.dim + k] += gp[bag * b.dim + k] * s;
      }
    }
  });
}

void SampleWeightGradCpu(const Tensor& g, const Tensor& w, const EmbeddingBags& b, const Tensor& acc) {
  double* ap = acc.data<double>();
  const double* gp = g.data<double>();
  const double* wp = w.data<double>();
  for (int64_t bag = 0; bag < b.count; ++bag)
    for (int64_t i = b.start[bag]; i < b.start[bag + 1]; ++i) {
      double dot = 0;
      if (b.idx[i] != b.pad)
        for (int64_t k = 0; k < b.dim; ++k) dot += gp[bag * b.dim + k] * wp[b.idx[i] * b.dim + k];
      ap[i] = dot;
    }
  for (size_t i = b.start.empty() ? 0 : b.start.back(); i < b.idx.size(); ++i) ap[i] = 0;
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::EmbeddingBagForwardKernel>(DeviceType::kCPU, &ForwardCpu);
  kernels::RegisterKernel<kernels::EmbeddingBagWeightGradKernel>(DeviceType::kCPU, &WeightGradCpu);
  kernels::RegisterKernel<kernels::EmbeddingBagSampleWeightGradKernel>(DeviceType::kCPU, &SampleWeightGradCpu);
  return true;
}();

}  // namespace

int64_t BagSize(const EmbeddingBags& b, int64_t bag) {
  int64_t n = 0;
  for (int64_t i = b.start[bag]; i < b.start[bag + 1]; ++i) n += b.idx[i] != b.pad;
  return n;
}

void EmbeddingBagForwardRows(const Tensor& w, const EmbeddingBags& b, const Tensor& out) {
  kernels::CallKernel<kernels::EmbeddingBagForwardKernel>(out.device(), w, b, out);
}

void EmbeddingBagWeightGrad(const Tensor& g, const Tensor& w, const EmbeddingBags& b, bool scale_grad_by_freq,
                            const Tensor& acc) {
  kernels::CallKernel<kernels::EmbeddingBagWeightGradKernel>(acc.device(), g, w, b, scale_grad_by_freq, acc);
}

void EmbeddingBagSampleWeightGrad(const Tensor& g, const Tensor& w, const EmbeddingBags& b, const Tensor& acc) {
  kernels::CallKernel<kernels::EmbeddingBagSampleWeightGradKernel>(acc.device(), g, w, b, acc);
}

}  // namespace oneflow
