// Mask-driven selection: where, masked_fill, masked_select, masked_scatter, nonzero, argwhere.
// OneFlow accepts integral conditions and masks (nonzero = true) where PyTorch wants bool; they
// are converted to bool once, before the kernels (docs/oneflow_differences.md).
#include <numeric>

#include "kernels/where.h"
#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "ops/pointwise.h"
#include "decl/argwhere.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/index_put.h"
#include "decl/masked_fill.h"
#include "decl/masked_scatter.h"
#include "decl/masked_select.h"
#include "decl/narrow.h"
#include "decl/nonzero.h"
#include "decl/reshape.h"
#include "decl/sum.h"
#include "decl/where.h"

namespace oneflow {

namespace {

// The mask as a bool tensor: bool masks as they are, integral ones as "nonzero" (OneFlow).
Tensor BoolMask(const Tensor& mask, const char* op, const char* what) {
  OF_CHECK(!IsFloating(mask.dtype())) << op << " expected " << what
                                      << " to be a bool or integer tensor, but got a tensor with dtype "
                                      << DTypeName(mask.dtype());
  return CastTo(mask, DType::kBool);
}

// `t` on `device`: host scalars (Python numbers, 0-d CPU tensors) the ops accept beside device
// tensors are copied there for the CUDA kernels.
Tensor OnDeviceOf(const Tensor& t, const Device& device) {
  return t.device() == device ? t : MovedTo(t, device);
}

// out[i] = mask[i] ? v : in[i]; out may be in itself (in-place).
void RunMaskedFill(const Tensor& out, const Tensor& in, const Tensor& mask, const Scalar& v) {
  if (out.device().type != DeviceType::kMeta) MaskedFillInto(out, in, mask, v);
}

// `t` expanded (a view, no copy) to `shape`.
Tensor ExpandTo(const Tensor& t, const DimVector& shape) {
  if (t.sizes() == shape) return t;
  DimVector st(shape.size(), 0);
  const int off = shape.size() - t.dim();
  for (int d = 0; d < t.dim(); ++d) st[off + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
  return MakeView(t, shape, st, t.offset());
}

// Number of true entries of contiguous bool data in [b, e).
int64_t CountTrue(const bool* m, int64_t b, int64_t e) {
  int64_t c = 0;
  for (int64_t i = b; i < e; ++i) c += m[i];
  return c;
}

}  // namespace

Tensor Where(const Tensor& condition, const Tensor& input, const Tensor& other) {
  OpScope scope("where");
  Tensor c = BoolMask(condition, "where", "condition");
  DType dt = ResultType({&input, &other});
  DimVector shape = BroadcastShapes(condition.sizes(), BroadcastShapes(input.sizes(), other.sizes()));
  CheckSameDevice(condition, input);
  CheckSameDevice(condition, other);
  CheckSameDevice(input, other);
  const Device& device = OpDevice({&condition, &input, &other});
  Tensor out = Empty(shape, dt, device);
  Tensor a = CastTo(input, dt), b = CastTo(other, dt);
  if (device.type != DeviceType::kMeta) WhereInto(out, c, a, b);
  return out;
}

Tensor MaskedFill(const Tensor& input, const Tensor& mask, const Tensor& value) {
  OpScope scope("masked_fill");
  Tensor m = BoolMask(mask, "masked_fill", "mask");
  CheckSameDevice(input, mask);
  DimVector shape = BroadcastShapes(input.sizes(), mask.sizes());
  Scalar v = FillValue(value, input.dtype(), "masked_fill");
  Tensor out = Empty(shape, input.dtype(), input.device());
  RunMaskedFill(out, input, m, v);
  return out;
}

Tensor& MaskedFill_(Tensor& input, const Tensor& mask, const Tensor& value) {
  OpScope scope("masked_fill_");
  Tensor m = BoolMask(mask, "masked_fill_", "mask");
  CheckSameDevice(input, mask);
  CheckInplaceResult(input, input.dtype(), BroadcastShapes(input.sizes(), mask.sizes()));
  Scalar v = FillValue(value, input.dtype(), "masked_fill_");
  m = Unaliased(m, input);
  RunMaskedFill(input, input, m, v);
  input.BumpVersion();
  return input;
}

Tensor MaskedSelect(const Tensor& input, const Tensor& mask) {
  OpScope scope("masked_select");
  Tensor m = BoolMask(mask, "masked_select", "mask");
  CheckSameDevice(input, mask);
  DimVector shape = BroadcastShapes(input.sizes(), mask.sizes());
  CheckHasData(input);  // the output size depends on the mask's values
  CheckHasData(mask);
  if (input.device().type == DeviceType::kCUDA) {
    // The set positions through advanced indexing (the mask's nonzero() on the host).
    const DimVector s = shape.empty() ? DimVector{1} : shape;
    return IndexGather(ExpandTo(input, s), {ExpandTo(OnDeviceOf(m, input.device()), s)});
  }
  Tensor mc = Contiguous(ExpandTo(m, shape));
  Tensor xc = Contiguous(ExpandTo(input, shape));
  const int64_t n = NumelOf(shape);
  const bool* mp = mc.data<bool>();
  std::vector<int64_t> counts(GetNumThreads() + 1, 0);
  ParallelChunks(n, kGrainSize, [&](int c, int64_t b, int64_t e) { counts[c + 1] = CountTrue(mp, b, e); });
  std::partial_sum(counts.begin(), counts.end(), counts.begin());
  Tensor out = Empty(DimVector{counts.back()}, input.dtype(), input.device());
  DispatchBySize(input.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    const U* x = xc.data<U>();
    U* o = out.data<U>();
    ParallelChunks(n, kGrainSize, [&](int c, int64_t b, int64_t e) {
      int64_t k = counts[c];
      for (int64_t i = b; i < e; ++i)
        if (mp[i]) o[k++] = x[i];
    });
  });
  return out;
}

namespace {
// dst[i] = source[k-th set position] for set positions, in row-major order of dst's shape.
void MaskedScatterInto(const Tensor& dst, const Tensor& m, const Tensor& source, const char* op) {
  OF_CHECK(source.dtype() == dst.dtype()) << op << ": expected self and source to have same dtypes but got "
                                          << DTypeName(dst.dtype()) << " and " << DTypeName(source.dtype());
  CheckSameDevice(dst, source);
  if (dst.device().type == DeviceType::kMeta) return;
  if (dst.device().type == DeviceType::kCUDA) {
    // The set positions (the mask's nonzero() on the host) take source's first values through
    // index_put's kernels; a 0-d dst as one element.
    const DimVector shape = dst.dim() == 0 ? DimVector{1} : dst.sizes();
    Tensor target = dst.dim() == 0 ? Reshape(dst, shape) : dst;
    const Tensor mask = ExpandTo(OnDeviceOf(m, dst.device()), shape);
    const int64_t count = ItemOf(Sum(mask, std::nullopt, false, DType::kInt64)).ToInt();
    OF_CHECK(count <= source.numel()) << "Number of elements of source < number of ones in mask";
    IndexPut_(target, {mask}, Narrow(Reshape(Contiguous(source), DimVector{-1}), 0, 0, count), false);
    return;
  }
  Tensor mc = Contiguous(ExpandTo(m, dst.sizes()));
  const int64_t n = dst.numel();
  const bool* mp = mc.data<bool>();
  std::vector<int64_t> counts(GetNumThreads() + 1, 0);
  ParallelChunks(n, kGrainSize, [&](int c, int64_t b, int64_t e) { counts[c + 1] = CountTrue(mp, b, e); });
  std::partial_sum(counts.begin(), counts.end(), counts.begin());
  OF_CHECK(counts.back() <= source.numel()) << "Number of elements of source < number of ones in mask";
  Tensor src = Contiguous(source);
  Tensor d = dst.is_contiguous() ? dst : Contiguous(dst);
  DispatchBySize(dst.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    const U* s = src.data<U>();
    U* o = d.data<U>();
    ParallelChunks(n, kGrainSize, [&](int c, int64_t b, int64_t e) {
      int64_t k = counts[c];
      for (int64_t i = b; i < e; ++i)
        if (mp[i]) o[i] = s[k++];
    });
  });
  if (!d.is_same(dst)) CopyInto(dst, d);
}
}  // namespace

Tensor MaskedScatter(const Tensor& input, const Tensor& mask, const Tensor& source) {
  OpScope scope("masked_scatter");
  Tensor m = BoolMask(mask, "masked_scatter", "mask");
  DimVector shape = BroadcastShapes(input.sizes(), mask.sizes());
  Tensor out = Empty(shape, input.dtype(), input.device());
  OF_CHECK(source.dtype() == input.dtype()) << "masked_scatter: expected self and source to have same dtypes but got "
                                            << DTypeName(input.dtype()) << " and " << DTypeName(source.dtype());
  if (input.device().type == DeviceType::kMeta) return out;
  CopyInto(out, input);
  MaskedScatterInto(out, m, source, "masked_scatter");
  return out;
}

Tensor& MaskedScatter_(Tensor& input, const Tensor& mask, const Tensor& source) {
  OpScope scope("masked_scatter_");
  Tensor m = BoolMask(mask, "masked_scatter_", "mask");
  CheckInplaceResult(input, input.dtype(), BroadcastShapes(input.sizes(), mask.sizes()));
  MaskedScatterInto(input, Unaliased(m, input), Unaliased(source, input), "masked_scatter_");
  input.BumpVersion();
  return input;
}

Tensor Nonzero(const Tensor& input) {
  OpScope scope("nonzero");
  CheckHasData(input);
  // The output's size depends on the values: CUDA input goes through a host copy (a sync, as in
  // PyTorch), its indices back to the device.
  if (input.device().type == DeviceType::kCUDA) return MovedTo(Nonzero(OnHost(input)), input.device());
  Tensor m = CastTo(input, DType::kBool);
  Tensor mc = Contiguous(m);
  const int64_t n = mc.numel();
  const int nd = input.dim();
  const bool* mp = mc.data<bool>();
  std::vector<int64_t> counts(GetNumThreads() + 1, 0);
  ParallelChunks(n, kGrainSize, [&](int c, int64_t b, int64_t e) { counts[c + 1] = CountTrue(mp, b, e); });
  std::partial_sum(counts.begin(), counts.end(), counts.begin());
  Tensor out = Empty(DimVector{counts.back(), nd}, DType::kInt64);
  int64_t* o = out.data<int64_t>();
  const DimVector& sizes = input.sizes();
  const int64_t row = nd == 0 ? 1 : sizes[nd - 1];
  ParallelChunks(n, kGrainSize, [&](int c, int64_t b, int64_t e) {
    // Walk rows of the last dim: the outer coordinates change once per row.
    int64_t idx[kMaxDims];
    int64_t rem = b;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % sizes[d];
      rem /= sizes[d];
    }
    int64_t* w = o + counts[c] * nd;
    for (int64_t i = b; i < e;) {
      const int64_t first = nd == 0 ? 0 : idx[nd - 1];
      const int64_t stop = std::min(e, i + (row - first));
      for (int64_t j = i; j < stop; ++j) {
        if (!mp[j]) continue;
        for (int d = 0; d + 1 < nd; ++d) w[d] = idx[d];
        if (nd > 0) w[nd - 1] = first + (j - i);
        w += nd;
      }
      if (nd > 0) idx[nd - 1] = first + (stop - i);
      i = stop;
      for (int d = nd - 1; d > 0 && idx[d] == sizes[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
  });
  return out;
}

Tensor Argwhere(const Tensor& input) {
  OpScope scope("argwhere");
  return Nonzero(input);
}

}  // namespace oneflow
