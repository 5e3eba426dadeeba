// Kernel entries of the copying shape ops: flip, roll, tril/triu (+ in place), diag_embed.
// All data movement goes through the threaded copy engines (MoveInto, CopyInto) or a row loop
// of memcpy/memset; nothing computes a source index per element.
#include <cstring>

#include "core/parallel.h"
#include "kernels/move.h"
#include "ops/copy.h"
#include "ops/manual_ops.h"
#include "ops/pointwise.h"
#include "decl/diag_embed.h"
#include "decl/diagonal.h"
#include "decl/empty.h"
#include "decl/flip.h"
#include "decl/masked_fill.h"
#include "decl/narrow.h"
#include "decl/reshape.h"
#include "decl/roll.h"
#include "decl/tril.h"
#include "decl/triu.h"
#include "decl/where.h"

namespace oneflow {

namespace {

bool IsMeta(const Tensor& t) { return t.device().type == DeviceType::kMeta; }

// Wrapped, duplicate-free dims (PyTorch's message for duplicates).
void MarkDims(const DimVector& dims, int ndim, bool* mark) {
  for (int64_t d : dims) {
    const int w = WrapDim(d, ndim);
    OF_CHECK(!mark[w]) << "dim " << w << " appears multiple times in the list of dims";
    mark[w] = true;
  }
}

}  // namespace

Tensor Flip(const Tensor& input, const DimVector& dims) {
  OpScope scope("flip");
  bool flip[kMaxDims] = {false};
  MarkDims(dims, input.dim(), flip);
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  if (IsMeta(out) || out.numel() == 0) return out;
  // The copy reads a view walking the flipped dims backwards (negative strides, internal only).
  DimVector st = input.strides();
  int64_t off = input.offset();
  for (int d = 0; d < input.dim(); ++d) {
    if (!flip[d]) continue;
    off += (input.sizes()[d] - 1) * st[d];
    st[d] = -st[d];
  }
  MoveInto(out, MakeView(input, input.sizes(), st, off));
  return out;
}

Tensor Roll(const Tensor& input, const DimVector& shifts, std::optional<DimVector> dims) {
  OpScope scope("roll");
  if (!dims || dims->empty()) {
    OF_CHECK(shifts.size() == 1) << "shifts and dimensions must align. shifts: " << shifts.size()
                                 << ", dims:0";
    // Over the flattened tensor, then back to the input's shape.
    Tensor flat = Reshape(input, DimVector{-1});
    return Reshape(Roll(flat, shifts, DimVector{0}), input.sizes());
  }
  OF_CHECK(shifts.size() == dims->size()) << "shifts and dimensions must align. shifts: " << shifts.size()
                                          << ", dims:" << dims->size();
  // A dim named twice rolls by the sum of its shifts.
  int64_t shift[kMaxDims] = {0};
  bool rolled[kMaxDims] = {false};
  for (int i = 0; i < dims->size(); ++i) {
    const int d = WrapDim((*dims)[i], input.dim());
    rolled[d] = true;
    shift[d] += shifts[i];
  }
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  if (IsMeta(out) || out.numel() == 0) return out;
  int ds[kMaxDims], k = 0;
  for (int d = 0; d < input.dim(); ++d) {
    if (!rolled[d]) continue;
    const int64_t n = input.sizes()[d];
    shift[d] = ((shift[d] % n) + n) % n;
    if (shift[d] != 0) ds[k++] = d;
  }
  // out[(i + s) mod n] = in[i]: along each rolled dim the output is two blocks, [0, s) taken
  // from the input's tail and [s, n) from its head; 2^k block copies in all.
  for (int mask = 0; mask < (1 << k); ++mask) {
    Tensor dst = out, src = input;
    for (int j = 0; j < k; ++j) {
      const int d = ds[j];
      const int64_t n = input.sizes()[d], s = shift[d];
      if (mask & (1 << j)) {
        dst = Narrow(dst, d, 0, s);
        src = Narrow(src, d, n - s, s);
      } else {
        dst = Narrow(dst, d, s, n - s);
        src = Narrow(src, d, 0, n - s);
      }
    }
    MoveInto(dst, src);
  }
  return out;
}

namespace {

// Visits every row of the trailing matrix dims of `t` ([..., rows, cols]): f(row index within its
// matrix, pointer to the row's first element). Rows are spread over threads.
template <typename F>
void ForEachRow(const Tensor& t, const F& f) {
  const int nd = t.dim();
  const int64_t rows = t.sizes()[nd - 2], cols = t.sizes()[nd - 1];
  const int64_t total = t.numel() / std::max<int64_t>(cols, 1);
  if (cols == 0 || total == 0) return;
  const int64_t es = t.element_size();
  char* base = t.raw_data();
  ParallelFor(0, total, std::max<int64_t>(1, kGrainSize / cols), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      // Offset of row r: decompose over the dims before the last one.
      int64_t rem = r, off = 0;
      for (int d = nd - 2; d >= 0; --d) {
        off += (rem % t.sizes()[d]) * t.strides()[d];
        rem /= t.sizes()[d];
      }
      f(r % rows, base + off * es);
    }
  });
}

void CheckTriangle(const Tensor& input, const char* name) {
  OF_CHECK(input.dim() >= 2) << name << ": input tensor must have at least 2 dimensions";
}

// Columns [lo, hi) of row `row` are kept by tril (lower) / triu (upper) with diagonal k.
void KeptColumns(bool lower, int64_t row, int64_t k, int64_t cols, int64_t* lo, int64_t* hi) {
  if (lower) {
    *lo = 0;
    *hi = std::clamp<int64_t>(row + k + 1, 0, cols);
  } else {
    *lo = std::clamp<int64_t>(row + k, 0, cols);
    *hi = cols;
  }
}

// Device tensors: the [rows, cols] bool mask of the kept (`keep`) or zeroed entries, made on the
// host and moved to the device, for where / masked_fill_ (which broadcast it over the batch).
Tensor TriangleMask(const Tensor& t, int64_t k, bool lower, bool keep) {
  const int64_t rows = t.sizes()[t.dim() - 2], cols = t.sizes()[t.dim() - 1];
  Tensor m = Empty(DimVector{rows, cols}, DType::kBool);
  bool* p = m.data<bool>();
  for (int64_t r = 0; r < rows; ++r) {
    int64_t lo, hi;
    KeptColumns(lower, r, k, cols, &lo, &hi);
    for (int64_t j = 0; j < cols; ++j) p[r * cols + j] = (j >= lo && j < hi) == keep;
  }
  return MovedTo(m, t.device());
}

Tensor Triangle(const Tensor& input, int64_t k, bool lower, const char* name) {
  CheckTriangle(input, name);
  if (input.device().type == DeviceType::kCUDA)
    return Where(TriangleMask(input, k, lower, true), input, ScalarToTensor(Scalar(0), input.dtype()));
  Tensor out = Empty(input.sizes(), input.dtype(), input.device());
  if (IsMeta(out) || out.numel() == 0) return out;
  const int64_t cols = input.sizes()[input.dim() - 1], es = input.element_size();
  const int64_t in_cs = input.strides()[input.dim() - 1];
  // Each output row: the kept span copied from the input row, zeros elsewhere (all-zero bytes
  // are zero in every dtype).
  const int64_t rows = input.sizes()[input.dim() - 2];
  char* obase = out.raw_data();
  // Rows of the contiguous output in order; the matching input row by index decomposition.
  const int64_t total = out.numel() / cols;
  const int nd = input.dim();
  ParallelFor(0, total, std::max<int64_t>(1, kGrainSize / cols), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t rem = r, off = 0;
      for (int d = nd - 2; d >= 0; --d) {
        off += (rem % input.sizes()[d]) * input.strides()[d];
        rem /= input.sizes()[d];
      }
      const char* src = input.raw_data() + off * es;
      char* dst = obase + r * cols * es;
      int64_t lo, hi;
      KeptColumns(lower, r % rows, k, cols, &lo, &hi);
      if (lo > 0) std::memset(dst, 0, lo * es);
      if (hi < cols) std::memset(dst + hi * es, 0, (cols - hi) * es);
      if (hi <= lo) continue;
      if (in_cs == 1) {
        std::memcpy(dst + lo * es, src + lo * es, (hi - lo) * es);
      } else {
        DispatchWidth(es, [&](auto tag) {
          using U = typename std::decay_t<decltype(tag)>::type;
          const U* s = reinterpret_cast<const U*>(src);
          U* o = reinterpret_cast<U*>(dst);
          for (int64_t j = lo; j < hi; ++j) o[j] = s[j * in_cs];
        });
      }
    }
  });
  return out;
}

Tensor& TriangleInplace(Tensor& self, int64_t k, bool lower, const char* name) {
  CheckTriangle(self, name);
  CheckInplaceResult(self, self.dtype(), self.sizes());
  if (IsMeta(self) || self.numel() == 0) return self;
  if (self.device().type == DeviceType::kCUDA)
    return MaskedFill_(self, TriangleMask(self, k, lower, false), ScalarToTensor(Scalar(0), self.dtype()));
  const int64_t cols = self.sizes()[self.dim() - 1], es = self.element_size();
  const int64_t cs = self.strides()[self.dim() - 1];
  ForEachRow(self, [&](int64_t row, char* p) {
    int64_t lo, hi;
    KeptColumns(lower, row, k, cols, &lo, &hi);
    DispatchWidth(es, [&](auto tag) {
      using U = typename std::decay_t<decltype(tag)>::type;
      U* o = reinterpret_cast<U*>(p);
      for (int64_t j = 0; j < lo; ++j) o[j * cs] = U(0);
      for (int64_t j = std::max(hi, lo); j < cols; ++j) o[j * cs] = U(0);
    });
  });
  self.BumpVersion();
  return self;
}

}  // namespace

Tensor Tril(const Tensor& input, int64_t diagonal) {
  OpScope scope("tril");
  return Triangle(input, diagonal, true, "tril");
}

Tensor Triu(const Tensor& input, int64_t diagonal) {
  OpScope scope("triu");
  return Triangle(input, diagonal, false, "triu");
}

Tensor& Tril_(Tensor& self, int64_t diagonal) {
  OpScope scope("tril_");
  return TriangleInplace(self, diagonal, true, "tril");
}

Tensor& Triu_(Tensor& self, int64_t diagonal) {
  OpScope scope("triu_");
  return TriangleInplace(self, diagonal, false, "triu");
}

Tensor DiagEmbed(const Tensor& input, int64_t offset, int64_t dim1, int64_t dim2) {
  OpScope scope("diag_embed");
  const int nd = input.dim() + 1;
  const int d1 = WrapDim(dim1, nd), d2 = WrapDim(dim2, nd);
  OF_CHECK(d1 != d2) << "diagonal dimensions cannot be identical " << dim1 << ", " << dim2;
  const int64_t n = input.dim() == 0 ? 1 : input.sizes()[input.dim() - 1];
  const int64_t m = n + (offset >= 0 ? offset : -offset);
  // Output dims: the input's leading dims in order, with the two new ones of size m at d1, d2.
  DimVector shape(nd);
  int src = 0;
  for (int d = 0; d < nd; ++d) shape[d] = (d == d1 || d == d2) ? m : input.sizes()[src++];
  Tensor out = Empty(shape, input.dtype(), input.device());
  if (IsMeta(out) || out.numel() == 0) return out;
  if (out.device().type == DeviceType::kCUDA) FillWith(out, Scalar(0));
  else std::memset(out.raw_data(), 0, out.numel() * out.element_size());
  // Note [Diagonal geometry]: the diagonal view of the output has exactly the input's shape.
  MoveInto(Diagonal(out, offset, d1, d2), input.dim() == 0 ? Reshape(input, DimVector{1}) : input);
  return out;
}

}  // namespace oneflow
