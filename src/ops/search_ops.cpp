// Searching and counting: searchsorted, bucketize, bincount, histc, in_top_k.
#include <cmath>
#include <string>

#include "kernels/search.h"
#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "ops/pointwise.h"
#include "decl/bincount.h"
#include "decl/bucketize.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/histc.h"
#include "decl/in_top_k.h"
#include "decl/searchsorted.h"
#include "decl/zeros.h"

namespace oneflow {

namespace {

Tensor SearchImpl(const Tensor& seq, const Tensor& input, bool out_int32, bool right, const Tensor& sorter) {
  const DType dt = ResultType({&seq, &input});
  // A Python number never decides the device.
  Tensor out = Empty(input.sizes(), out_int32 ? DType::kInt32 : DType::kInt64, seq.device());
  if (seq.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  Tensor s = Contiguous(CastTo(seq, dt)), v = Contiguous(CastTo(input, dt));
  Tensor so = sorter.defined() ? Contiguous(sorter) : Tensor();
  if (out.device().type == DeviceType::kCUDA) {  // a host input (a Python number) moves to the device
    auto here = [&](const Tensor& t) { return !t.defined() || t.device() == out.device() ? t : MovedTo(t, out.device()); };
    v = here(v);
    so = here(so);
  }
  SearchSortedRows(s, v, so, right, out);
  return out;
}

}  // namespace

Tensor Searchsorted(const Tensor& sorted_sequence, const Tensor& input, bool out_int32, bool right,
                    std::optional<std::string> side, const Tensor& sorter) {
  OpScope scope("searchsorted");
  if (side) {
    OF_CHECK(*side == "left" || *side == "right")
        << "side can only be 'left' or 'right' but got " << *side;
    OF_CHECK(!(right && *side == "left"))
        << "side and right can't be set to opposites, got side of left while right was True";
    right = *side == "right";
  }
  const Tensor& seq = sorted_sequence;
  OF_CHECK(seq.dim() > 0) << "boundaries tensor should have positive dimension, but got 0 dimension";
  bool rows_match = seq.dim() == 1 || seq.dim() == input.dim();
  for (int d = 0; rows_match && seq.dim() > 1 && d + 1 < seq.dim(); ++d) rows_match = seq.sizes()[d] == input.sizes()[d];
  OF_CHECK(rows_match) << "boundaries tensor should be 1 dimension or the first N-1 dimensions "
                          "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                       << ShapeStr(seq.sizes()) << " and input value tensor " << ShapeStr(input.sizes());
  OF_CHECK(seq.dtype() != DType::kBool && input.dtype() != DType::kBool)
      << "bool tensors are not supported";
  if (sorter.defined()) {
    OF_CHECK(sorter.dtype() == DType::kInt64)
        << "sorter must be a tensor of long dtype but got " << DTypeName(sorter.dtype());
    OF_CHECK(sorter.sizes() == seq.sizes())
        << "boundary and sorter must have the same size, but got boundary tensor "
        << ShapeStr(seq.sizes()) << " and got sorter tensor " << ShapeStr(sorter.sizes());
    if (sorter.device().type != DeviceType::kMeta) {
      Tensor so = Contiguous(sorter);
      OF_CHECK(!FindOutOfRange(so, 0, seq.sizes()[seq.dim() - 1])) << "sorter index out of range";
    }
  }
  CheckSameDevice(seq, input);
  return SearchImpl(seq, input, out_int32, right, sorter);
}

Tensor Bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32, bool right) {
  OpScope scope("bucketize");
  OF_CHECK(boundaries.dim() == 1) << "boundaries tensor must be 1 dimension, but got dim(" << boundaries.dim() << ")";
  OF_CHECK(boundaries.dtype() != DType::kBool && input.dtype() != DType::kBool)
      << "bool tensors are not supported";
  CheckSameDevice(boundaries, input);
  return SearchImpl(boundaries, input, out_int32, right, Tensor());
}

Tensor Bincount(const Tensor& input, const Tensor& weights, int64_t minlength) {
  OpScope scope("bincount");
  OF_CHECK(!IsFloating(input.dtype()) && input.dtype() != DType::kBool)
      << "\"bincount_cpu\" not implemented for '" << DTypeName(input.dtype()) << "'";
  OF_CHECK(input.dim() == 1) << "bincount only supports 1-d non-negative integral inputs.";
  OF_CHECK(minlength >= 0) << "minlength should be >= 0";
  OF_CHECK(!weights.defined() || (weights.dim() == 1 && weights.numel() == input.numel()))
        << "weights should be 1-d and have the same length as input";
  CheckHasData(input);  // the output length depends on the values
  if (input.device().type == DeviceType::kCUDA) {  // counted in host copies (a sync), moved back
    CheckSameDevice(input, weights.defined() ? weights : input);
    return MovedTo(Bincount(OnHost(input), weights.defined() ? OnHost(weights) : weights, minlength), input.device());
  }
  // An empty input counts nothing: int64 zeros whatever the weights (as PyTorch).
  if (input.numel() == 0) return Zeros(DimVector{minlength}, DType::kInt64, input.device(), false);
  Tensor x = Contiguous(CastTo(input, DType::kInt64));
  const int64_t n = x.numel();
  const int64_t* xp = x.data<int64_t>();
  int64_t mx = -1, mn = 0;
  for (int64_t i = 0; i < n; ++i) {
    mx = std::max(mx, xp[i]);
    mn = std::min(mn, xp[i]);
  }
  OF_CHECK(mn >= 0) << "bincount only supports 1-d non-negative integral inputs.";
  const int64_t bins = std::max(minlength, mx + 1);
  const DType od = !weights.defined() ? DType::kInt64
                   : weights.dtype() == DType::kFloat32 ? DType::kFloat32 : DType::kFloat64;
  Tensor out = Zeros(DimVector{bins}, od, input.device(), false);
  // Per-thread partial counts (doubles for weights) when the bins are few next to the input.
  Tensor w = weights.defined() ? Contiguous(CastTo(weights, DType::kFloat64)) : Tensor();
  const double* wp = w.defined() ? w.data<double>() : nullptr;
  const int nt = (n > kGrainSize && bins * 4 <= n) ? GetNumThreads() : 1;
  std::vector<double> acc(static_cast<size_t>(nt) * bins, 0.0);
  ParallelChunks(n, nt > 1 ? (n + nt - 1) / nt : n, [&](int c, int64_t b, int64_t e) {
    double* a = acc.data() + static_cast<size_t>(c) * bins;
    if (wp) {
      for (int64_t i = b; i < e; ++i) a[xp[i]] += wp[i];
    } else {
      for (int64_t i = b; i < e; ++i) a[xp[i]] += 1.0;
    }
  });
  DispatchAll(od, [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    T* o = out.data<T>();
    for (int64_t k = 0; k < bins; ++k) {
      double s = 0;
      for (int c = 0; c < nt; ++c) s += acc[static_cast<size_t>(c) * bins + k];
      o[k] = static_cast<T>(s);
    }
  });
  return out;
}

Tensor Histc(const Tensor& input, int64_t bins, const Scalar& min, const Scalar& max) {
  OpScope scope("histc");
  OF_CHECK(IsFloating(input.dtype())) << "\"histogram_cpu\" not implemented for '" << DTypeName(input.dtype()) << "'";
  OF_CHECK(bins > 0) << "bins must be > 0, but got " << bins << " for dimension 0";
  double lo = min.ToDouble(), hi = max.ToDouble();
  OF_CHECK(lo <= hi) << "max must be larger than min";
  Tensor out = Empty(DimVector{bins}, input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta) return out;
  // CUDA: counted in a host copy (a sync), moved back.
  if (input.device().type == DeviceType::kCUDA) return MovedTo(Histc(OnHost(input), bins, min, max), input.device());
  Tensor x = Contiguous(input);
  const int64_t n = x.numel();
  if (lo == hi && n > 0) {
    // The data's range (NaN included, which then fails the finiteness check below).
    Tensor mm = CastTo(x, DType::kFloat64);
    const double* p = mm.data<double>();
    lo = hi = p[0];
    for (int64_t i = 0; i < n; ++i) {
      if (p[i] != p[i]) { lo = hi = p[i]; break; }
      lo = std::min(lo, p[i]);
      hi = std::max(hi, p[i]);
    }
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  OF_CHECK(std::isfinite(lo) && std::isfinite(hi)) << "range of [" << lo << ", " << hi << "] is not finite";
  const int nt = n > kGrainSize ? GetNumThreads() : 1;
  std::vector<int64_t> counts(static_cast<size_t>(nt) * bins, 0);
  DispatchFloat(input.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* p = x.data<T>();
    // The bin is (x - min) * bins / (max - min) in T's arithmetic, as PyTorch computes it:
    // 16-bit floats round to T after every operation.
    auto r = [](M v) { return static_cast<M>(static_cast<T>(v)); };
    const M l = r(static_cast<M>(lo)), h = r(static_cast<M>(hi)), nb = r(static_cast<M>(bins)), w = r(h - l);
    ParallelChunks(n, nt > 1 ? (n + nt - 1) / nt : std::max<int64_t>(n, 1), [&](int c, int64_t b, int64_t e) {
      int64_t* cnt = counts.data() + static_cast<size_t>(c) * bins;
      for (int64_t i = b; i < e; ++i) {
        const M v = static_cast<M>(p[i]);
        if (!(v >= l && v <= h)) continue;  // outside the range, or NaN
        int64_t pos = static_cast<int64_t>(r(r(r(v - l) * nb) / w));
        cnt[pos >= bins ? bins - 1 : pos] += 1;
      }
    });
    T* o = out.data<T>();
    for (int64_t k = 0; k < bins; ++k) {
      int64_t s = 0;
      for (int c = 0; c < nt; ++c) s += counts[static_cast<size_t>(c) * bins + k];
      o[k] = static_cast<T>(static_cast<M>(s));
    }
  });
  return out;
}

Tensor InTopK(const Tensor& targets, const Tensor& predictions, int64_t k) {
  OpScope scope("in_top_k");
  // Note [Legacy ops' checks] (src/ops/oneflow_functional_ops.cpp): upstream's checks and words.
  OF_CHECK(targets.dim() == 0 || predictions.dim() == 0 || targets.sizes()[0] == predictions.sizes()[0])
      << "The num of targets must equal the num of predictions, got targets " << ShapeStr(targets.sizes())
      << " and predictions " << ShapeStr(predictions.sizes());
  OF_CHECK(targets.dim() == 1) << "The dimension of targets must be 1, got shape " << ShapeStr(targets.sizes());
  OF_CHECK(predictions.dim() == 2) << "The dimension of predictions must be 2, got shape "
                                   << ShapeStr(predictions.sizes());
  OF_CHECK(targets.dtype() == DType::kInt32 || targets.dtype() == DType::kInt64)
      << "targets data type must be index type (int32 or int64), got " << DTypeName(targets.dtype());
  OF_CHECK(IsFloating(predictions.dtype()))
      << "predictions must be a floating point tensor, got " << DTypeName(predictions.dtype());
  CheckSameDevice(targets, predictions);
  Tensor out = Empty(targets.sizes(), DType::kBool, targets.device());
  if (targets.device().type == DeviceType::kMeta) return out;
  if (targets.device().type == DeviceType::kCUDA)  // in host copies (a sync), moved back
    return MovedTo(InTopK(OnHost(targets), OnHost(predictions), k), targets.device());
  Tensor t = Contiguous(CastTo(targets, DType::kInt64)), p = Contiguous(predictions);
  const int64_t rows = p.sizes()[0], classes = p.sizes()[1];
  DispatchFloat(p.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    using M = OpMath<T>;
    const T* pp = p.data<T>();
    const int64_t* tp = t.data<int64_t>();
    bool* o = out.data<bool>();
    ParallelFor(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(classes, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        // OneFlow's rule: false for a target outside the classes or any non-finite prediction;
        // else true when fewer than k classes score strictly higher (ties count as in).
        const int64_t target = tp[i];
        const T* row = pp + i * classes;
        bool ok = target >= 0 && target < classes && std::isfinite(static_cast<M>(row[target]));
        int64_t higher = 0;
        if (ok) {
          const M tv = static_cast<M>(row[target]);
          for (int64_t j = 0; j < classes; ++j) {
            const M v = static_cast<M>(row[j]);
            ok &= std::isfinite(v);
            higher += v > tv;
          }
        }
        o[i] = ok && higher < k;
      }
    });
  });
  return out;
}

}  // namespace oneflow
