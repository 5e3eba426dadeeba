// Shared by the selection / scatter / sort ops: index dtype checks, index-range validation
// (before any output is written), row iteration over strided tensors, and element copies by size.
#pragma once
#include "kernels/move.h"
#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include "core/parallel.h"
#include "core/tensor.h"
#include "ops/copy.h"
#include "decl/empty.h"

namespace oneflow {

// Calls f(Tag<I>{}) with I = int32_t or int64_t, the two index dtypes the ops accept.
template <typename F>
decltype(auto) DispatchIndex(DType t, F&& f) {
  if (t == DType::kInt32) return f(Tag<int32_t>{});
  OF_ASSERT(t == DType::kInt64) << "index dtype " << DTypeName(t);
  return f(Tag<int64_t>{});
}

inline bool IsIndexDType(DType t, bool allow_int32) {
  return t == DType::kInt64 || (allow_int32 && t == DType::kInt32);
}

// The first value of contiguous index tensor `idx` outside [lo, hi), if any. A vectorised
// min/max pass over blocks finds a bad block; only that block is then searched. CUDA indices:
// their min and max on the device (one sync); a host copy only when one is out of range.
std::optional<int64_t> FindOutOfRange(const Tensor& idx, int64_t lo, int64_t hi);
// The smallest and largest value of a non-empty contiguous index tensor (any dtype DispatchIndex
// takes); CUDA ones reduced on the device, two numbers back (one sync).
std::pair<int64_t, int64_t> IndexExtremes(const Tensor& idx);

// The first out-of-range index a fused check-and-copy kernel met, on any thread. Such kernels
// only write a fresh output, which is dropped when the op then raises; in-place kernels check
// with FindOutOfRange before writing instead.
class BadIndex {
 public:
  void Note(int64_t v) {
    if (!seen_.exchange(true)) value_ = v;
  }
  std::optional<int64_t> get() const { return seen_.load() ? std::optional<int64_t>(value_) : std::nullopt; }

 private:
  std::atomic<bool> seen_{false};
  int64_t value_ = 0;
};

// Element-size dispatch for ops that only move values: f(Tag<U>{}) with an unsigned type of the
// element's size, so copies are single loads/stores instead of memcpy calls.
template <typename F>
decltype(auto) DispatchBySize(int64_t size, F&& f) {
  switch (size) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    case 16: return f(Tag<Bytes16>{});  // complex128
    default: break;
  }
  OF_ASSERT(size == 8) << "element size " << size;
  return f(Tag<uint64_t>{});
}

// Walks the positions of a row-major index space of `nd` dims, keeping the element offset of up
// to N operands (strides in elements; broadcast dims have stride 0). Used for the "outer" dims
// of row-wise kernels: Seek once per thread chunk, then Next per row.
template <int N>
struct Odometer {
  int nd = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];
  int64_t pos[kMaxDims];
  int64_t off[N];

  void Seek(int64_t linear, const int64_t* base) {
    for (int k = 0; k < N; ++k) off[k] = base[k];
    for (int d = nd - 1; d >= 0; --d) {
      pos[d] = linear % sizes[d];
      linear /= sizes[d];
      for (int k = 0; k < N; ++k) off[k] += pos[d] * strides[k][d];
    }
  }
  void Next() {
    for (int d = nd - 1; d >= 0; --d) {
      for (int k = 0; k < N; ++k) off[k] += strides[k][d];
      if (++pos[d] < sizes[d]) return;
      for (int k = 0; k < N; ++k) off[k] -= pos[d] * strides[k][d];
      pos[d] = 0;
    }
  }
  int64_t count() const {
    int64_t n = 1;
    for (int d = 0; d < nd; ++d) n *= sizes[d];
    return n;
  }
};

// Runs body(const int64_t* offsets) for every row of `o` (rows of `row_len` elements each),
// split over threads when the total work is large.
template <int N, typename Body>
void ForEachRow(const Odometer<N>& o, const int64_t* base, int64_t row_len, const Body& body) {
  const int64_t rows = o.count();
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(row_len, 1));
  ParallelFor(0, rows, grain, [&](int64_t b, int64_t e) {
    Odometer<N> it = o;
    it.Seek(b, base);
    for (int64_t r = b; r < e; ++r) {
      body(it.off);
      if (r + 1 < e) it.Next();
    }
  });
}

// An operand of an in-place op that shares self's memory would be overwritten while it is
// read: such operands are copied first.
inline Tensor Unaliased(const Tensor& t, const Tensor& self) {
  if (!t.defined() || t.storage() != self.storage() || t.device().type == DeviceType::kMeta) return t;
  Tensor copy = Empty(t.sizes(), t.dtype(), t.device());
  CopyInto(copy, t);
  return copy;
}

// Splits [0, n) into equal chunks, at most one per thread (a single one when n <= grain), and
// runs f(chunk, begin, end) for each in parallel; returns the number of chunks. Two-pass kernels
// (count per chunk, prefix sums, then write) call it twice with the same n and grain and get the
// same chunks.
template <typename F>
int ParallelChunks(int64_t n, int64_t grain, const F& f) {
  const int nt = (n <= grain || omp_in_parallel())
                     ? 1 : static_cast<int>(std::min<int64_t>(GetNumThreads(), (n + grain - 1) / grain));
  if (nt <= 1) {
    f(0, int64_t(0), n);
    return 1;
  }
  const int64_t per = (n + nt - 1) / nt;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int c = 0; c < nt; ++c) {
    const int64_t b = c * per, e = std::min(n, b + per);
    if (b < e) f(c, b, e);
  }
  return nt;
}

// 0-d tensors index like 1-element 1-d ones in gather/scatter/index_select (PyTorch's rule).
inline int64_t SizeAt(const Tensor& t, int d) { return t.dim() == 0 ? 1 : t.sizes()[d]; }
inline int64_t StrideAt(const Tensor& t, int d) { return t.dim() == 0 ? 1 : t.strides()[d]; }

// The fill value of masked_fill / index_fill / scatter(value=): a Python number or a 0-d tensor
// (else PyTorch's "only supports a 0-dimensional value tensor" error), checked to fit `dtype`
// like PyTorch's fills ("value cannot be converted to type ... without overflow").
Scalar FillValue(const Tensor& value, DType dtype, const char* op);
void CheckFillRange(const Scalar& v, DType dtype);

}  // namespace oneflow
