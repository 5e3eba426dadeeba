// Indexing primitives: basic indexing makes views (SliceView, SelectView); advanced indexing
// gathers through integer index tensors (IndexGather, behind x[idx]) and writes through the table
// op index_put / index_put_ (behind x[idx] = v), PyTorch semantics; copy_.
#include "ops/index_util.h"
#include "kernels/adv_index.h"
#include "ops/manual_ops.h"
#include "decl/add.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/index_put.h"
#include "decl/lt.h"
#include "decl/nonzero.h"
#include "decl/where.h"

namespace oneflow {

Tensor SliceView(const Tensor& input, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  OpScope scope("getitem");
  OF_CHECK_VALUE(step > 0) << "step must be greater than zero";
  int d = WrapDim(dim, input.dim());
  const int64_t n = input.sizes()[d];
  // Python slice clamping.
  auto clampi = [n](int64_t v) { if (v < 0) v += n; return v < 0 ? 0 : (v > n ? n : v); };
  start = clampi(start);
  stop = clampi(stop);
  const int64_t len = stop > start ? (stop - start + step - 1) / step : 0;
  DimVector s = input.sizes(), st = input.strides();
  s[d] = len;
  st[d] *= step;
  return MakeView(input, s, st, input.offset() + start * input.strides()[d]);
}

Tensor SelectView(const Tensor& input, int64_t dim, int64_t index) {
  OpScope scope("getitem");
  OF_CHECK_INDEX(input.dim() > 0) << "invalid index of a 0-dim tensor.";
  int d = WrapDim(dim, input.dim());
  const int64_t n = input.sizes()[d];
  OF_CHECK_INDEX(index >= -n && index < n) << "index " << index << " is out of bounds for dimension "
                                           << d << " with size " << n << " [OneFlow: Index out of range (expected "
                                           << "to be in range of [" << -n << ", " << n - 1 << "], but got " << index
                                           << ")]";  // Note [Upstream's words] (src/autograd/meta.cpp)
  if (index < 0) index += n;
  DimVector s = input.sizes(), st = input.strides();
  s.erase(d);
  st.erase(d);
  return MakeView(input, s, st, input.offset() + index * input.strides()[d]);
}

namespace {

// Offsets of every position of `dims` of self (row-major), starting at 0.
std::vector<int64_t> PositionOffsets(const Tensor& self, const std::vector<int>& dims) {
  std::vector<int64_t> off(1, 0);
  for (int d : dims) {
    std::vector<int64_t> next;
    next.reserve(off.size() * self.sizes()[d]);
    for (int64_t o : off)
      for (int64_t i = 0; i < self.sizes()[d]; ++i) next.push_back(o + i * self.strides()[d]);
    off.swap(next);
  }
  return off;
}

// Bool masks stand for their nonzero() columns, one index per mask dim.
std::vector<Tensor> ExpandMasks(const Tensor& self, const std::vector<Tensor>& indices) {
  std::vector<Tensor> out;
  for (const Tensor& t : indices) {
    if (!t.defined() || t.dtype() != DType::kBool) {
      out.push_back(t);
      continue;
    }
    const int at = out.size();
    for (int d = 0; d < t.dim(); ++d)
      OF_CHECK_INDEX(at + d < self.dim() && t.sizes()[d] == self.sizes()[at + d])
          << "The shape of the mask " << ShapeStr(t.sizes()) << " at index " << d
          << " does not match the shape of the indexed tensor " << ShapeStr(self.sizes()) << " at index " << at + d;
    Tensor nz = Nonzero(OnHost(t));  // [count, mask dims]; MakeAdvIndex reads it on the host
    for (int d = 0; d < t.dim(); ++d)
      out.push_back(MakeView(nz, DimVector{nz.sizes()[0]}, DimVector{t.dim()}, nz.offset() + d));
  }
  return out;
}

// A device self (not the CPU's) and indices all on its device: the per-position offsets by
// table ops on that device, each index range-checked by its min / max there (one small copy back
// each), so `x[idx]` never brings idx to the host (that copy and its loop cost more than the
// gather).
bool AllOn(const std::vector<Tensor>& indices, const Device& device) {
  for (const Tensor& t : indices)
    if (t.defined() && t.device() != device) return false;
  return true;
}

Tensor DeviceOffsets(const Tensor& self, const std::vector<Tensor>& indices, const DimVector& ishape) {
  const Tensor zero = ScalarToTensor(Scalar(int64_t(0)), DType::kInt64);
  Tensor acc = ScalarToTensor(Scalar(self.offset()), DType::kInt64);
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d].defined()) continue;
    const int64_t size = self.sizes()[d];
    const Tensor t = Contiguous(CastTo(indices[d], DType::kInt64));
    if (auto bad = FindOutOfRange(t, -size, size)) {
      // PyTorch's words, which name neither the index nor the dim when the dim is empty.
      if (size == 0) OF_THROW(kIndex) << "index is out of bounds for dimension with size 0";
      OF_THROW(kIndex) << "index " << *bad << " is out of bounds for dimension " << d << " with size " << size;
    }
    const Tensor sz = ScalarToTensor(Scalar(size), DType::kInt64);
    const Tensor wrapped = Where(Lt(t, zero), Add(t, sz, Scalar(1)), t);
    acc = Add(acc, wrapped, Scalar(self.strides()[d]));  // acc + wrapped * stride, broadcast
  }
  Tensor out = Empty(ishape, DType::kInt64, self.device());
  CopyInto(out, acc);  // broadcast to the index shape, contiguous
  return out;
}

// A 0-d bool mask (x[flow.tensor(True)], index_put_(x, (mask,), v)) indexes a new dim of size 1,
// as PyTorch: that dim is inserted into self (a view: writes reach self) and the mask becomes a
// one-element mask over it, so the mask is an advanced index like any other (kept when true,
// emptied when false) and the result has PyTorch's shape.
Tensor WithZeroDimMasks(const Tensor& self, std::vector<Tensor>* indices) {
  Tensor view = self;
  int at = 0;  // the dim of view the next index reads
  for (Tensor& t : *indices) {
    if (t.defined() && t.dtype() == DType::kBool && t.dim() == 0) {
      OF_CHECK_INDEX(at <= view.dim()) << "too many indices for tensor of dimension " << self.dim();
      DimVector sizes = view.sizes(), strides = view.strides();
      sizes.insert(at, 1);
      strides.insert(at, 1);
      view = MakeView(view, sizes, strides, view.offset());
      t = MakeView(t, DimVector{1}, DimVector{1}, t.offset());
    }
    at += t.defined() && t.dtype() == DType::kBool ? t.dim() : 1;
  }
  return view;
}

bool HasZeroDimMask(const std::vector<Tensor>& indices) {
  for (const Tensor& t : indices)
    if (t.defined() && t.dtype() == DType::kBool && t.dim() == 0) return true;
  return false;
}

AdvIndex MakeAdvIndex(const Tensor& self, const std::vector<Tensor>& raw) {
  std::vector<Tensor> indices = ExpandMasks(self, raw);
  OF_CHECK_INDEX(static_cast<int>(indices.size()) <= self.dim())
      << "too many indices for tensor of dimension " << self.dim() << " (got " << indices.size() << ")";
  DimVector ishape;
  int first = -1, last = -1;
  for (size_t k = 0; k < indices.size(); ++k) {
    const Tensor& t = indices[k];
    if (!t.defined()) continue;
    OF_CHECK_INDEX(!IsFloating(t.dtype()) && t.dtype() != DType::kBool)
        << "tensors used as indices must be long, int, byte or bool tensors";
    if (first >= 0) {
      bool ok = true;
      const int nd = std::max(ishape.size(), t.dim());
      for (int i = 0; i < nd; ++i) {
        const int a = ishape.size() - nd + i, b = t.dim() - nd + i;
        const int64_t sa = a >= 0 ? ishape[a] : 1, sb = b >= 0 ? t.sizes()[b] : 1;
        ok &= sa == sb || sa == 1 || sb == 1;
      }
      OF_CHECK_INDEX(ok) << "shape mismatch: indexing tensors could not be broadcast together with shapes "
                         << ShapeStr(ishape) << ", " << ShapeStr(t.sizes());
      ishape = BroadcastShapes(ishape, t.sizes());
    } else {
      ishape = t.sizes();
      first = k;
    }
    last = k;
  }
  OF_CHECK_INDEX(first >= 0) << "expected at least one index tensor (got none)";
  bool adjacent = true;
  for (int k = first; k <= last; ++k) adjacent &= indices[k].defined();
  std::vector<int> pre, post;
  for (int d = 0; d < self.dim(); ++d) {
    if (d < static_cast<int>(indices.size()) && indices[d].defined()) continue;
    (adjacent && d < first ? pre : post).push_back(d);
  }
  AdvIndex a;
  for (int d : pre) a.result_shape.push_back(self.sizes()[d]);
  for (int64_t s : ishape) a.result_shape.push_back(s);
  for (int d : post) a.result_shape.push_back(self.sizes()[d]);
  a.n = NumelOf(ishape);
  if (self.device().type == DeviceType::kMeta) return a;
  for (const Tensor& t : indices)
    if (t.defined()) CheckHasData(t);
  // Per index position: the self offset of the indexed dims, with bounds checks; a chunk
  // records its first bad value and the error is raised after the loop (never inside threads).
  const bool on_device = self.device().type != DeviceType::kCPU && AllOn(indices, self.device());
  if (on_device) a.device_offsets = DeviceOffsets(self, indices, ishape);
  if (!on_device) a.offsets.assign(a.n, self.offset());
  for (size_t d = 0; d < indices.size() && !on_device; ++d) {
    if (!indices[d].defined()) continue;
    // Host indices (with a CUDA self too, or CUDA ones next to a mask's host columns): the
    // offsets are computed (and range-checked) on the host.
    Tensor t = CastTo(OnHost(indices[d]), DType::kInt64);
    Odometer<1> o;
    o.nd = ishape.size();
    for (int i = 0; i < o.nd; ++i) {
      const int j = t.dim() - o.nd + i;
      o.sizes[i] = ishape[i];
      o.strides[0][i] = j >= 0 && t.sizes()[j] != 1 ? t.strides()[j] : 0;
    }
    const int64_t size = self.sizes()[d], stride = self.strides()[d];
    const int64_t* tp = t.data<int64_t>();
    std::vector<int64_t> bad(GetNumThreads() + 1, a.n);
    std::vector<int64_t> bad_value(GetNumThreads() + 1, 0);
    ParallelChunks(a.n, kGrainSize, [&](int c, int64_t b, int64_t e) {
      Odometer<1> it = o;
      const int64_t base = 0;
      it.Seek(b, &base);
      for (int64_t i = b; i < e; ++i) {
        int64_t v = tp[it.off[0]];
        if (v < -size || v >= size) {
          bad[c] = i;
          bad_value[c] = v;
          return;
        }
        a.offsets[i] += (v < 0 ? v + size : v) * stride;
        if (i + 1 < e) it.Next();
      }
    });
    for (size_t c = 0; c < bad.size(); ++c) {
      OF_CHECK_INDEX(bad[c] == a.n || size != 0) << "index is out of bounds for dimension with size 0";  // PyTorch's
      OF_CHECK_INDEX(bad[c] == a.n) << "index " << bad_value[c] << " is out of bounds for dimension " << d
                                    << " with size " << size;
    }
  }
  a.pre_off = PositionOffsets(self, pre);
  if (!post.empty()) {
    a.has_post = true;
    a.inner = self.sizes()[post.back()];
    a.inner_stride = self.strides()[post.back()];
    post.pop_back();
  }
  a.post_off = PositionOffsets(self, post);
  return a;
}

}  // namespace

Tensor IndexGather(const Tensor& self_in, const std::vector<Tensor>& indices_in) {
  OpScope scope("getitem");
  if (HasZeroDimMask(indices_in)) {
    std::vector<Tensor> indices = indices_in;
    const Tensor self = WithZeroDimMasks(self_in, &indices);
    return IndexGather(self, indices);
  }
  const Tensor& self = self_in;
  const std::vector<Tensor>& indices = indices_in;
  AdvIndex a = MakeAdvIndex(self, indices);
  Tensor out = Empty(a.result_shape, self.dtype(), self.device());
  if (out.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  CheckHasData(self);
  AdvGather(self, a, out);
  return out;
}

namespace {

void CheckPutValues(const Tensor& self, const Tensor& values, const AdvIndex& a) {
  OF_CHECK(values.dtype() == self.dtype() || values.is_wrapped_number())
      << "Index put requires the source and destination dtypes match, got " << DTypeName(self.dtype())
      << " for the destination and " << DTypeName(values.dtype()) << " for the source.";
  bool ok = values.dim() <= a.result_shape.size();
  for (int i = 0; ok && i < values.dim(); ++i) {
    const int64_t v = values.sizes()[values.dim() - 1 - i];
    ok = v == 1 || v == a.result_shape[a.result_shape.size() - 1 - i];
  }
  OF_CHECK(ok) << "shape mismatch: value tensor of shape " << ShapeStr(values.sizes())
               << " cannot be broadcast to indexing result of shape " << ShapeStr(a.result_shape);
  CheckSameDevice(self, values);
}

// self[index positions] = (or +=) values, values broadcast to the result shape.
void PutInto(const Tensor& self, const AdvIndex& a, const Tensor& values, bool accumulate) {
  if (NumelOf(a.result_shape) == 0 || self.device().type == DeviceType::kMeta) return;
  // A single value is read once; otherwise values in the result's contiguous layout.
  const bool scalar = values.numel() == 1;
  Tensor v = values;
  if (scalar) {
    v = CastTo(values, self.dtype());
  } else if (!(values.sizes() == a.result_shape && values.is_contiguous() && values.dtype() == self.dtype())) {
    v = Empty(a.result_shape, self.dtype(), self.device());
    CopyInto(v, values);
  }
  AdvPut(self, a, v, scalar, accumulate);
}

}  // namespace

Tensor& IndexPut_(Tensor& input, const std::vector<Tensor>& indices_in, const Tensor& values, bool accumulate) {
  OpScope scope("index_put_");
  std::vector<Tensor> indices = indices_in;
  Tensor target = HasZeroDimMask(indices) ? WithZeroDimMasks(input, &indices) : input;
  AdvIndex a = MakeAdvIndex(target, indices);
  CheckPutValues(target, values, a);
  PutInto(target, a, Unaliased(values, input), accumulate);
  input.BumpVersion();
  return input;
}

Tensor IndexPut(const Tensor& input, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  OpScope scope("index_put");
  // The geometry of the (contiguous) output: the same checks as on input, offsets for out.
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  std::vector<Tensor> idx = indices;
  Tensor target = HasZeroDimMask(idx) ? WithZeroDimMasks(out, &idx) : out;
  AdvIndex a = MakeAdvIndex(target, idx);
  CheckPutValues(target, values, a);
  if (input.device().type == DeviceType::kMeta) return out;
  CopyInto(out, input);
  PutInto(target, a, values, accumulate);
  return out;
}

void CopyFrom(const Tensor& self, const Tensor& src) {
  OpScope scope("copy_");
  BroadcastShapes(src.sizes(), self.sizes());
  DimVector b = BroadcastShapes(src.sizes(), self.sizes());
  OF_CHECK(b == self.sizes()) << "output with shape " << ShapeStr(self.sizes())
                              << " doesn't match the broadcast shape " << ShapeStr(b);
  CopyInto(self, src);
  self.BumpVersion();
}

}  // namespace oneflow
