// embedding_bag (src/ops/table/embedding.yaml): bags of rows reduced by sum / mean / max, given
// as a 1-D index list cut by offsets (nn.functional turns 2-D inputs into that form). Entries
// equal to padding_idx are skipped (and not counted by 'mean'); an empty bag gives zeros.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "ops/copy.h"
#include "decl/contiguous.h"
#include "decl/embedding_bag.h"
#include "decl/embedding_bag_backward.h"
#include "decl/embedding_bag_per_sample_weights_backward.h"
#include "decl/empty.h"
#ifdef ONEFLOW_WITH_CUDA
#include "cuda/embedding_bag.h"
#endif

namespace oneflow {

namespace {

enum class BagMode { kSum, kMean, kMax };

struct Bags {
  BagMode mode;
  int64_t rows = 0, dim = 0, count = 0;  // weight rows, embedding dim, number of bags
  int64_t pad = -1;
  std::vector<int64_t> idx, start;  // bag b covers idx[start[b] .. start[b + 1])
};

BagMode ParseMode(const std::string& mode) {
  if (mode == "sum") return BagMode::kSum;
  if (mode == "mean") return BagMode::kMean;
  if (mode == "max") return BagMode::kMax;
  OF_THROW(kValue) << "mode has to be one of sum, mean or max";
}

// Shapes (meta inference) and, with data, the index/offset values.
Bags Prepare(const Tensor& weight, const Tensor& indices, const Tensor& offsets, const std::string& mode,
             const Tensor& per_sample_weights, bool include_last_offset, int64_t padding_idx, bool with_data) {
  Bags b;
  b.mode = ParseMode(mode);
  OF_CHECK(weight.dim() == 2) << "'weight' must be 2-D";
  OF_CHECK(indices.dim() == 1) << "input has to be a 1D or 2D Tensor, but got Tensor of dimension " << indices.dim();
  OF_CHECK(offsets.dim() == 1) << "offsets has to be a 1D Tensor, but got Tensor of dimension " << offsets.dim();
  OF_CHECK(!IsFloating(indices.dtype()) && !IsFloating(offsets.dtype()))
      << "embedding_bag expects integer indices and offsets";
  b.rows = weight.sizes()[0];
  b.dim = weight.sizes()[1];
  b.count = offsets.numel() - (include_last_offset ? 1 : 0);
  OF_CHECK(b.count >= 0) << "include_last_offset: number of offsets should be at least 1";
  if (per_sample_weights.defined()) {
    OF_CHECK(b.mode == BagMode::kSum) << "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                         "supported for mode='sum' (got mode='" << mode << "'). Please open a feature "
                                         "request on GitHub.";
    OF_CHECK(per_sample_weights.sizes() == indices.sizes())
        << "embedding_bag: If per_sample_weights (" << ShapeStr(per_sample_weights.sizes())
        << ") is not None, then it must have the same shape as the input (" << ShapeStr(indices.sizes()) << ")";
  }
  b.pad = padding_idx < -1 ? padding_idx + b.rows : padding_idx;
  if (!with_data) return b;
  CheckHasData(indices);
  CheckHasData(offsets);
  // (CUDA indices: a host copy, range-checked here; the CUDA kernels get tables made from it.)
  Tensor ic = Contiguous(OnHost(CastTo(indices, DType::kInt64))), oc = Contiguous(OnHost(CastTo(offsets, DType::kInt64)));
  b.idx.assign(ic.data<int64_t>(), ic.data<int64_t>() + ic.numel());
  for (int64_t i : b.idx) OF_CHECK(i >= 0 && i < b.rows) << "index out of range in self";
  b.start.assign(oc.data<int64_t>(), oc.data<int64_t>() + b.count);
  if (b.count > 0) {
    OF_CHECK(b.start[0] == 0) << "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                                 "from position 0. However, got " << b.start[0];
  }
  const int64_t end = include_last_offset && offsets.numel() > 0 ? oc.data<int64_t>()[b.count]
                                                                 : static_cast<int64_t>(b.idx.size());
  b.start.push_back(std::min<int64_t>(end, b.idx.size()));
  for (int64_t k = 0; k < b.count; ++k) {
    OF_CHECK(b.start[k] <= b.start[k + 1] && b.start[k + 1] <= static_cast<int64_t>(b.idx.size()))
        << "offsets have to be a non-decreasing sequence not larger than the number of indices, got "
        << b.start[k] << " then " << b.start[k + 1];
  }
  return b;
}

// For mode 'max': per bag and embedding column, the position (in idx) of the largest value, -1
// for an empty bag. The first maximum wins.
std::vector<int64_t> ArgMax(const Bags& b, const Tensor& w) {
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

int64_t BagSize(const Bags& b, int64_t bag) {
  int64_t n = 0;
  for (int64_t i = b.start[bag]; i < b.start[bag + 1]; ++i) n += b.idx[i] != b.pad;
  return n;
}

std::vector<double> SampleWeights(const Tensor& per_sample_weights, size_t n) {
  std::vector<double> v(n, 1.0);
  if (!per_sample_weights.defined()) return v;
  Tensor c = Contiguous(OnHost(CastTo(per_sample_weights, DType::kFloat64)));
  std::copy(c.data<double>(), c.data<double>() + n, v.begin());
  return v;
}

#ifdef ONEFLOW_WITH_CUDA
// The device tables of cuda/embedding_bag.h, with the CPU loops' factors.
cuda::BagTables Upload(const Bags& b, const std::vector<double>& psw, bool scale_grad_by_freq, bool for_grad,
                       const Device& d) {
  cuda::BagTables t;
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
    t.scale = VectorTensor(psw, d);
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
      double s = psw[i] / (scale_grad_by_freq ? static_cast<double>(freq[b.idx[i]]) : 1.0);
      if (b.mode == BagMode::kMean) s /= static_cast<double>(n);
      gscale[i] = s;
    }
  }
  t.bag_of = VectorTensor(bag_of, d);
  t.gscale = VectorTensor(gscale, d);
  return t;
}
#endif

}  // namespace

Tensor EmbeddingBag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, const std::string& mode,
                    const Tensor& per_sample_weights, bool include_last_offset, int64_t padding_idx,
                    bool scale_grad_by_freq) {
  OpScope scope("embedding_bag");
  const bool meta = weight.device().type == DeviceType::kMeta;
  Bags b = Prepare(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, !meta);
  Tensor out = Empty(DimVector{b.count, b.dim}, weight.dtype(), weight.device());
  if (meta) return out;
  Tensor w = Contiguous(weight);
  const std::vector<double> psw = SampleWeights(per_sample_weights, b.idx.size());
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    cuda::EmbeddingBagForward(w, Upload(b, psw, false, false, out.device()), b.mode == BagMode::kMax, out);
    return out;
  }
#endif
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
          const M s = static_cast<M>(psw[i]);
          for (int64_t k = 0; k < b.dim; ++k) acc[k] += static_cast<M>(row[k]) * s;
        }
        const int64_t n = b.mode == BagMode::kMean ? BagSize(b, bag) : 1;
        const M inv = n > 0 ? M(1) / static_cast<M>(n) : M(0);
        for (int64_t k = 0; k < b.dim; ++k) orow[k] = static_cast<T>(acc[k] * inv);
      }
    });
  });
  return out;
}

Tensor EmbeddingBagBackward(const Tensor& grad_output, const Tensor& weight, const Tensor& indices,
                            const Tensor& offsets, const std::string& mode, const Tensor& per_sample_weights,
                            bool include_last_offset, int64_t padding_idx, bool scale_grad_by_freq) {
  OpScope scope("embedding_bag_backward");
  const bool meta = weight.device().type == DeviceType::kMeta;
  Bags b = Prepare(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, !meta);
  OF_CHECK(grad_output.sizes() == (DimVector{b.count, b.dim}))
      << "grad_output of shape " << ShapeStr(grad_output.sizes()) << " for " << b.count << " bags of dim " << b.dim;
  Tensor out = Empty(weight.sizes(), grad_output.dtype(), weight.device());
  if (meta) return out;
  Tensor w = Contiguous(weight);
  Tensor g = Contiguous(CastTo(grad_output, DType::kFloat64));
  const std::vector<double> psw = SampleWeights(per_sample_weights, b.idx.size());
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    Tensor acc = Empty(weight.sizes(), DType::kFloat64, out.device());
    FillWith(acc, Scalar(0.0));
    cuda::EmbeddingBagBackward(g, w, Upload(b, psw, scale_grad_by_freq, true, out.device()), b.mode == BagMode::kMax, acc);
    CopyInto(out, acc);
    return out;
  }
#endif
  const std::vector<int64_t> arg = b.mode == BagMode::kMax ? ArgMax(b, w) : std::vector<int64_t>();
  std::vector<int64_t> freq(b.rows, 0);
  for (int64_t i : b.idx) ++freq[i];
  // Each contribution: (position i in idx, bag, column range) -> grad rows; accumulated in double
  // then cast.
  std::vector<int64_t> bag_of(b.idx.size(), -1), bag_size(b.count);
  for (int64_t bag = 0; bag < b.count; ++bag) {
    bag_size[bag] = BagSize(b, bag);
    for (int64_t i = b.start[bag]; i < b.start[bag + 1]; ++i) bag_of[i] = bag;
  }
  Tensor acc = Empty(weight.sizes(), DType::kFloat64);
  double* ap = acc.data<double>();
  const double* gp = g.data<double>();
  ParallelFor(0, b.rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, b.dim)), [&](int64_t r0, int64_t r1) {
    std::fill(ap + r0 * b.dim, ap + r1 * b.dim, 0.0);
    for (size_t i = 0; i < b.idx.size(); ++i) {
      const int64_t r = b.idx[i], bag = bag_of[i];
      if (r < r0 || r >= r1 || r == b.pad || bag < 0) continue;
      double s = psw[i] / (scale_grad_by_freq ? static_cast<double>(freq[r]) : 1.0);
      if (b.mode == BagMode::kMean) s /= static_cast<double>(bag_size[bag]);
      for (int64_t k = 0; k < b.dim; ++k) {
        if (b.mode == BagMode::kMax && arg[bag * b.dim + k] != static_cast<int64_t>(i)) continue;
        ap[r * b.dim + k] += gp[bag * b.dim + k] * s;
      }
    }
  });
  CopyInto(out, acc);
  return out;
}

Tensor EmbeddingBagPerSampleWeightsBackward(const Tensor& grad_output, const Tensor& weight, const Tensor& indices,
                                            const Tensor& offsets, const std::string& mode, bool include_last_offset,
                                            int64_t padding_idx) {
  OpScope scope("embedding_bag_per_sample_weights_backward");
  const bool meta = weight.device().type == DeviceType::kMeta;
  Bags b = Prepare(weight, indices, offsets, mode, Tensor(), include_last_offset, padding_idx, !meta);
  OF_CHECK(b.mode == BagMode::kSum) << "embedding_bag_backward: per_sample_weights only supported for mode='sum'";
  Tensor out = Empty(indices.sizes(), grad_output.dtype(), weight.device());
  if (meta) return out;
  Tensor w = Contiguous(CastTo(weight, DType::kFloat64));
  Tensor g = Contiguous(CastTo(grad_output, DType::kFloat64));
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    Tensor acc = Empty(indices.sizes(), DType::kFloat64, out.device());
    cuda::EmbeddingBagSampleGrad(g, w, Upload(b, std::vector<double>(b.idx.size(), 1.0), false, true, out.device()), acc);
    CopyInto(out, acc);
    return out;
  }
#endif
  Tensor acc = Empty(indices.sizes(), DType::kFloat64);
  double* ap = acc.data<double>();
  for (int64_t bag = 0; bag < b.count; ++bag)
    for (int64_t i = b.start[bag]; i < b.start[bag + 1]; ++i) {
      double dot = 0;
      if (b.idx[i] != b.pad)
        for (int64_t k = 0; k < b.dim; ++k) dot += g.data<double>()[bag * b.dim + k] * w.data<double>()[b.idx[i] * b.dim + k];
      ap[i] = dot;
    }
  for (size_t i = b.start.empty() ? 0 : b.start.back(); i < b.idx.size(); ++i) ap[i] = 0;
  CopyInto(out, acc);
  return out;
}

}  // namespace oneflow
