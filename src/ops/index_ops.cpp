// Indexing primitives: basic indexing makes views (SliceView, SelectView); advanced indexing
// gathers/scatters through integer index tensors (IndexGather, IndexPut), PyTorch semantics.
#include "kernels/loop.h"
#include "ops/copy.h"
#include "ops/manual_ops.h"
#include "ops_decl.h"

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
                                           << d << " with size " << n;
  if (index < 0) index += n;
  DimVector s = input.sizes(), st = input.strides();
  s.erase(d);
  st.erase(d);
  return MakeView(input, s, st, input.offset() + index * input.strides()[d]);
}

Tensor Nonzero(const Tensor& input) {
  OpScope scope("nonzero");
  CheckHasData(input);
  Tensor c = Contiguous(input);
  std::vector<int64_t> coords;
  int64_t count = 0;
  DispatchAll(c.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const T* p = c.data<T>();
    DimVector idx(c.dim(), 0);
    for (int64_t i = 0; i < c.numel(); ++i) {
      if (static_cast<OpMath<T>>(p[i]) != OpMath<T>(0)) {
        for (int d = 0; d < c.dim(); ++d) coords.push_back(idx[d]);
        ++count;
      }
      for (int d = c.dim() - 1; d >= 0; --d) {
        if (++idx[d] < c.sizes()[d]) break;
        idx[d] = 0;
      }
    }
  });
  Tensor out = Empty(DimVector{count, c.dim()}, DType::kInt64);
  std::copy(coords.begin(), coords.end(), out.data<int64_t>());
  return out;
}

namespace {

// Geometry of an advanced-indexing operation: the broadcast index shape, where the indexed
// dims go in the result, and the flat offsets into `self` of every (result) element.
struct AdvIndex {
  DimVector result_shape;
  std::vector<int64_t> offsets;  // element offsets into self, one per result element
};

AdvIndex MakeAdvIndex(const Tensor& self, const std::vector<Tensor>& indices) {
  CheckHasData(self);
  for (const Tensor& t : indices) if (t.defined()) CheckHasData(t);
  OF_CHECK_INDEX(static_cast<int>(indices.size()) <= self.dim())
      << "too many indices for tensor of dimension " << self.dim() << " (got " << indices.size() << ")";
  DimVector ishape;
  bool first = true;
  int first_adv = -1, last_adv = -1;
  std::vector<Tensor> idx(self.dim());
  for (size_t k = 0; k < indices.size(); ++k) {
    if (!indices[k].defined()) continue;
    const Tensor& t = indices[k];
    OF_CHECK_INDEX(!IsFloating(t.dtype()) && t.dtype() != DType::kBool)
        << "tensors used as indices must be long, int, byte or bool tensors";
    ishape = first ? t.sizes() : BroadcastShapes(ishape, t.sizes());
    first = false;
    if (first_adv < 0) first_adv = k;
    last_adv = k;
    idx[k] = CastTo(t, DType::kInt64);
  }
  OF_ASSERT(first_adv >= 0) << "no advanced index";
  bool contiguous_adv = true;
  for (int k = first_adv; k <= last_adv; ++k) contiguous_adv &= idx[k].defined();
  // Result dims: [before..., index dims, after...] when the advanced indices are adjacent,
  // else the index dims come first (NumPy/PyTorch rule).
  DimVector before, after;
  for (int d = 0; d < self.dim(); ++d) {
    if (idx[d].defined()) continue;
    if (contiguous_adv && d < first_adv) before.push_back(d); else after.push_back(d);
  }
  AdvIndex r;
  for (int d : before) r.result_shape.push_back(self.sizes()[d]);
  const int ipos = r.result_shape.size();
  for (int64_t s : ishape) r.result_shape.push_back(s);
  for (int d : after) r.result_shape.push_back(self.sizes()[d]);
  // Broadcast and bounds-check the index values.
  std::vector<Tensor> flat(self.dim());
  for (int d = 0; d < self.dim(); ++d) {
    if (!idx[d].defined()) continue;
    Tensor e = Contiguous(MakeView(idx[d], ishape, [&] {
      DimVector st(ishape.size(), 0);
      const int off = ishape.size() - idx[d].dim();
      for (int k = 0; k < idx[d].dim(); ++k) st[off + k] = idx[d].sizes()[k] == 1 ? 0 : idx[d].strides()[k];
      return st;
    }(), idx[d].offset()));
    const int64_t n = self.sizes()[d];
    int64_t* p = e.data<int64_t>();
    for (int64_t i = 0; i < e.numel(); ++i) {
      OF_CHECK_INDEX(p[i] >= -n && p[i] < n)
          << "index " << p[i] << " is out of bounds for dimension " << d << " with size " << n;
      if (p[i] < 0) p[i] += n;
    }
    flat[d] = e;
  }
  const int64_t total = NumelOf(r.result_shape);
  r.offsets.resize(total);
  const int64_t nidx = NumelOf(ishape);
  DimVector ridx(r.result_shape.size(), 0);
  for (int64_t o = 0; o < total; ++o) {
    // Linear position inside the index block.
    int64_t ilin = 0;
    for (int k = 0; k < ishape.size(); ++k) ilin = ilin * ishape[k] + ridx[ipos + k];
    int64_t off = self.offset();
    for (int k = 0; k < (int)before.size(); ++k) off += ridx[k] * self.strides()[before[k]];
    for (int k = 0; k < (int)after.size(); ++k)
      off += ridx[ipos + ishape.size() + k] * self.strides()[after[k]];
    for (int d = 0; d < self.dim(); ++d)
      if (flat[d].defined()) off += flat[d].data<int64_t>()[nidx ? ilin : 0] * self.strides()[d];
    r.offsets[o] = off;
    for (int k = ridx.size() - 1; k >= 0; --k) {
      if (++ridx[k] < r.result_shape[k]) break;
      ridx[k] = 0;
    }
  }
  return r;
}

}  // namespace

Tensor IndexGather(const Tensor& self, const std::vector<Tensor>& indices) {
  OpScope scope("getitem");
  AdvIndex a = MakeAdvIndex(self, indices);
  Tensor out = Empty(a.result_shape, self.dtype(), self.device());
  const int64_t es = self.element_size();
  const char* base = static_cast<const char*>(self.storage()->data());
  char* o = out.raw_data();
  for (size_t i = 0; i < a.offsets.size(); ++i) std::memcpy(o + i * es, base + a.offsets[i] * es, es);
  return out;
}

void IndexPut(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
              bool accumulate) {
  OpScope scope(accumulate ? "index_put_" : "setitem");
  AdvIndex a = MakeAdvIndex(self, indices);
  Tensor v = Empty(a.result_shape, self.dtype(), self.device());
  CopyInto(v, values);  // broadcast + cast values to the indexed shape (checks first)
  char* base = static_cast<char*>(self.storage()->data());
  if (accumulate) {
    // Repeated indices add up (the gradient of a gather), so this loop stays serial.
    DispatchAll(self.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      T* b = reinterpret_cast<T*>(base);
      const T* vp = v.data<T>();
      for (size_t i = 0; i < a.offsets.size(); ++i)
        b[a.offsets[i]] = static_cast<T>(static_cast<OpMath<T>>(b[a.offsets[i]]) + static_cast<OpMath<T>>(vp[i]));
    });
  } else {
    const int64_t es = self.element_size();
    const char* vp = v.raw_data();
    for (size_t i = 0; i < a.offsets.size(); ++i) std::memcpy(base + a.offsets[i] * es, vp + i * es, es);
  }
  self.BumpVersion();
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
