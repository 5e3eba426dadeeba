// Gathers along a dim: gather, take_along_dim, take, index_select.
// Kernels run row by row: the index tensor (made contiguous) and the output share the row-major
// order, the innermost dim is a plain loop, and rows are split over threads. Index values are
// validated by a vectorised min/max pass before anything is written.
#include <type_traits>

#include "ops/index_util.h"
#include "ops/manual_ops.h"
#include "decl/add.h"
#include "decl/contiguous.h"
#include "decl/empty.h"
#include "decl/gather.h"
#include "decl/index_select.h"
#include "decl/lt.h"
#include "decl/reshape.h"
#include "decl/take.h"
#include "decl/take_along_dim.h"
#include "decl/where.h"

#ifdef ONEFLOW_WITH_CUDA
#include "cuda/index.h"
#endif

namespace oneflow {

namespace {

void CheckGatherShapes(const Tensor& input, int dim, const Tensor& index, const char* op) {
  const int nd = std::max(input.dim(), 1);
  OF_CHECK(std::max(index.dim(), 1) == nd) << "Index tensor must have the same number of dimensions as input tensor";
  for (int d = 0; d < nd; ++d) {
    if (d == dim) continue;
    OF_CHECK(SizeAt(index, d) <= SizeAt(input, d))
        << "Size does not match at dimension " << d << " expected index " << ShapeStr(index.sizes())
        << " to be no larger than self " << ShapeStr(input.sizes()) << " apart from dimension " << dim;
  }
  (void)op;
}

// out[p] = input[p with coordinate `dim` replaced by index[p]]; index and out contiguous with
// the same shape; input any strided view (broadcast dims have stride 0). Indices are checked
// against [0, size) as they are read (a fresh output may be half-written when one is bad).
std::optional<int64_t> GatherKernel(const Tensor& out, const Tensor& input, int dim, const Tensor& index) {
  const int nd = std::max(index.dim(), 1);
  const int last = nd - 1;
  const int64_t len = SizeAt(index, last);
  if (out.numel() == 0) return std::nullopt;
  Odometer<2> o;
  o.nd = nd - 1;
  const DimVector ist = ContiguousStrides(index.sizes());
  for (int d = 0; d < nd - 1; ++d) {
    o.sizes[d] = index.sizes()[d];
    o.strides[0][d] = d == dim ? 0 : input.strides()[d];
    o.strides[1][d] = ist[d];
  }
  const int64_t base[2] = {0, 0};
  const uint64_t size = SizeAt(input, dim);
  const int64_t dim_stride = StrideAt(input, dim);
  const int64_t inner_stride = last == dim ? 0 : StrideAt(input, last);
  BadIndex bad;
  DispatchBySize(input.element_size(), [&](auto utag) {
    using U = typename std::decay_t<decltype(utag)>::type;
    DispatchIndex(index.dtype(), [&](auto itag) {
      using I = typename std::decay_t<decltype(itag)>::type;
      const U* in = input.data<U>();
      const I* idx = index.data<I>();
      U* op = out.data<U>();
      // One loop per layout, so the common ones (gathering along a contiguous last dim) are a
      // plain indexed load per element.
      auto rows = [&](auto layout) {
        constexpr int kLayout = decltype(layout)::value;
        ForEachRow(o, base, len, [&](const int64_t* off) {
          const U* src = in + off[0];
          const I* ix = idx + off[1];
          U* dst = op + off[1];
          for (int64_t k = 0; k < len; ++k) {
            const int64_t j = ix[k];
            if (static_cast<uint64_t>(j) >= size) return bad.Note(j);  // negative ones too
            if constexpr (kLayout == 0) dst[k] = src[j];
            else if constexpr (kLayout == 1) dst[k] = src[j * dim_stride];
            else dst[k] = src[j * dim_stride + k * inner_stride];
          }
        });
      };
      if (inner_stride == 0 && dim_stride == 1) rows(std::integral_constant<int, 0>());
      else if (inner_stride == 0) rows(std::integral_constant<int, 1>());
      else rows(std::integral_constant<int, 2>());
    });
  });
  return bad.get();
}

// `t` expanded (a view, no copy) to `shape`.
Tensor ExpandView(const Tensor& t, const DimVector& shape) {
  if (t.sizes() == shape) return t;
  DimVector st(shape.size(), 0);
  const int off = shape.size() - t.dim();
  for (int d = 0; d < t.dim(); ++d) st[off + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
  return MakeView(t, shape, st, t.offset());
}

Tensor GatherImpl(const Tensor& input, int d, const Tensor& index) {
  CheckSameDevice(input, index);
  Tensor out = Empty(index.sizes(), input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {  // indices checked first (a host copy)
    const Tensor idx = Contiguous(CastTo(index, DType::kInt64));
    if (auto bad = FindOutOfRange(idx, 0, SizeAt(input, d)))
      OF_THROW(kRuntime) << "index " << *bad << " is out of bounds for dimension " << d << " with size "
                         << SizeAt(input, d);
    cuda::GatherDim(out, input, d, idx);
    return out;
  }
#endif
  if (auto bad = GatherKernel(out, input, d, Contiguous(index)))
    OF_THROW(kRuntime) << "index " << *bad << " is out of bounds for dimension " << d << " with size "
                       << SizeAt(input, d);
  return out;
}

}  // namespace

Tensor Gather(const Tensor& input, int64_t dim, const Tensor& index, bool sparse_grad) {
  OpScope scope("gather");
  (void)sparse_grad;  // the gradient is always dense here (a valid choice for any caller)
  const int d = WrapDim(dim, input.dim());
  OF_CHECK(IsIndexDType(index.dtype(), true)) << "Expected dtype int32/int64 for index";
  CheckGatherShapes(input, d, index, "gather");
  return GatherImpl(input, d, index);
}

Tensor TakeAlongDim(const Tensor& input, const Tensor& indices, std::optional<int64_t> dim) {
  OpScope scope("take_along_dim");
  OF_CHECK(IsIndexDType(indices.dtype(), false))
      << "dtype of indices should be int64 but got " << DTypeName(indices.dtype());
  if (!dim) {
    Tensor flat = Reshape(input, DimVector{-1});
    Tensor fi = Reshape(indices, DimVector{-1});
    return GatherImpl(flat, 0, fi);
  }
  const int d = WrapDim(*dim, input.dim());
  OF_CHECK(input.dim() == indices.dim())
      << "input and indices should have the same number of dimensions, but got "
      << input.dim() << " dimensions for input, and " << indices.dim() << " dimensions for indices";
  OF_CHECK_INDEX(input.dim() > 0) << "Dimension specified as " << *dim << " but tensor has no dimensions";
  // Both broadcast over every dim but `dim`, where each keeps its own size.
  DimVector s = input.sizes();
  s[d] = indices.sizes()[d];
  DimVector shape = BroadcastShapes(s, indices.sizes());
  CheckSameDevice(input, indices);
  Tensor out = Empty(shape, input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  // Negative indices count from the end (PyTorch accepts them here, unlike in gather).
  const int64_t size = input.sizes()[d];
  Tensor bi = Empty(shape, DType::kInt64, input.device());
  CopyInto(bi, ExpandView(indices, shape));
  if (auto bad = FindOutOfRange(bi, -size, size))
    OF_THROW(kIndex) << "index " << *bad << " is out of bounds for dimension " << d << " with size " << size;
#ifdef ONEFLOW_WITH_CUDA
  if (bi.device().type == DeviceType::kCUDA) {  // the wrap by table ops, then the gather kernel
    const Tensor sz = ScalarToTensor(Scalar(size), DType::kInt64);
    bi = Contiguous(Where(Lt(bi, ScalarToTensor(Scalar(int64_t(0)), DType::kInt64)), Add(bi, sz, Scalar(1)), bi));
    shape[d] = size;
    cuda::GatherDim(out, ExpandView(input, shape), d, bi);
    return out;
  }
#endif
  int64_t* p = bi.data<int64_t>();
  ParallelFor(0, bi.numel(), kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) p[i] += p[i] < 0 ? size : 0;
  });
  shape[d] = size;
  GatherKernel(out, ExpandView(input, shape), d, bi);  // in range: checked above
  return out;
}

Tensor Take(const Tensor& input, const Tensor& index) {
  OpScope scope("take");
  OF_CHECK(index.dtype() == DType::kInt64)
      << "Expected a long tensor for index, but got " << DTypeName(index.dtype());
  CheckSameDevice(input, index);
  Tensor out = Empty(index.sizes(), input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  const int64_t n = input.numel();
  OF_CHECK_INDEX(n > 0) << "cannot do a non-empty take from an empty axes.";
  // CUDA: the flattened input indexed by `index` (advanced indexing's kernels and range check).
  if (input.device().type == DeviceType::kCUDA) return IndexGather(Reshape(Contiguous(input), DimVector{-1}), {index});
  Tensor idx = Contiguous(index);
  Tensor x = Contiguous(input);
  BadIndex bad;
  DispatchBySize(input.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    const U* in = x.data<U>();
    const int64_t* ix = idx.data<int64_t>();
    U* o = out.data<U>();
    ParallelFor(0, out.numel(), kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t j = ix[i] < 0 ? ix[i] + n : ix[i];
        if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(n)) return bad.Note(ix[i]);
        o[i] = in[j];
      }
    });
  });
  if (auto v = bad.get())
    OF_THROW(kIndex) << "out of range: tried to access index " << *v << " on a tensor of " << n << " elements.";
  return out;
}

Tensor IndexSelect(const Tensor& input, int64_t dim, const Tensor& index) {
  OpScope scope("index_select");
  OF_CHECK_INDEX(index.dim() <= 1) << "Index is supposed to be a vector";
  const int d = WrapDim(dim, input.dim());
  OF_CHECK(IsIndexDType(index.dtype(), true)) << "Expected dtype int32 or int64 for index";
  CheckSameDevice(input, index);
  const int64_t n = index.numel();
  DimVector shape = input.sizes();
  if (input.dim() == 0) {
    OF_CHECK_INDEX(n == 1) << "Index to scalar can have only 1 value, got " << n << " value(s)";
  } else {
    shape[d] = n;
  }
  Tensor out = Empty(shape, input.dtype(), input.device());
  if (input.device().type == DeviceType::kMeta || out.numel() == 0) return out;
  Tensor idx = Contiguous(index);
  const int64_t size = SizeAt(input, d);
  Tensor x = Contiguous(input);
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < d; ++k) outer *= x.sizes()[k];
  for (int k = d + 1; k < x.dim(); ++k) inner *= x.sizes()[k];
  // Element copies for a last-dim select, whole-slice copies (as 8/4/2/1-byte words) otherwise.
  const int64_t bytes = inner * x.element_size();
  const int64_t word = inner == 1 ? x.element_size() : bytes % 8 == 0 ? 8 : bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 2 : 1;
  const int64_t words = bytes / word;
#ifdef ONEFLOW_WITH_CUDA
  if (out.device().type == DeviceType::kCUDA) {
    const Tensor i64 = Contiguous(CastTo(idx, DType::kInt64));
    if (auto v = FindOutOfRange(i64, 0, size))
      OF_THROW(kRuntime) << "index " << *v << " is out of bounds for dimension " << d << " with size " << size;
    cuda::IndexRows(out, x, i64, outer, size, inner);
    return out;
  }
#endif
  BadIndex bad;
  DispatchIndex(idx.dtype(), [&](auto itag) {
    using I = typename std::decay_t<decltype(itag)>::type;
    const I* ix = idx.data<I>();
    DispatchBySize(word, [&](auto utag) {
      using U = typename std::decay_t<decltype(utag)>::type;
      const U* in = reinterpret_cast<const U*>(x.raw_data());
      U* o = reinterpret_cast<U*>(out.raw_data());
      // W > 0: slices of W words, a compile-time count (rows of 2-4 floats or doubles are the
      // common embedding-like case; the copy then unrolls instead of looping).
      auto run = [&](auto wtag) {
        constexpr int64_t W = decltype(wtag)::value;
        const int64_t nw = W > 0 ? W : words;
        ParallelFor(0, outer * n, std::max<int64_t>(1, kGrainSize / nw), [&](int64_t b, int64_t e) {
          int64_t r = b / n, j = b % n;  // output slice (r, j), walked without divisions
          for (int64_t q = b; q < e; ++q) {
            const int64_t v = ix[j];
            if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(size)) return bad.Note(v);
            const U* s = in + (r * size + v) * nw;
            U* t = o + q * nw;
            for (int64_t w = 0; w < nw; ++w) t[w] = s[w];
            if (++j == n) {
              j = 0;
              ++r;
            }
          }
        });
      };
      if (words == 1) run(std::integral_constant<int64_t, 1>{});
      else if (words == 2) run(std::integral_constant<int64_t, 2>{});
      else if (words == 4) run(std::integral_constant<int64_t, 4>{});
      else run(std::integral_constant<int64_t, 0>{});
    });
  });
  if (auto v = bad.get())
    OF_THROW(kRuntime) << "index " << *v << " is out of bounds for dimension " << d << " with size " << size;
  return out;
}

}  // namespace oneflow
