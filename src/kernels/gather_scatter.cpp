// CPU kernels of the gathers and scatters along a dim (kernels/gather_scatter.h): rows of the
// index (contiguous) walked with an odometer, the innermost dim a plain loop, rows over threads.
#include "kernels/gather_scatter.h"

#include <algorithm>
#include <type_traits>

#include "core/dtype.h"
#include "ops/index_util.h"

namespace oneflow {

namespace {

std::optional<int64_t> GatherCpu(const Tensor& out, const Tensor& input, int dim, const Tensor& index) {
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

std::optional<int64_t> IndexSelectCpu(const Tensor& out, const Tensor& x, const Tensor& idx, int64_t outer,
                                      int64_t size, int64_t inner) {
  const int64_t n = idx.numel();
  // Element copies for a last-dim select, whole-slice copies (as 8/4/2/1-byte words) otherwise.
  const int64_t bytes = inner * x.element_size();
  const int64_t word = inner == 1 ? x.element_size() : bytes % 8 == 0 ? 8 : bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 2 : 1;
  const int64_t words = bytes / word;
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
  return bad.get();
}

template <typename T, ScatterOp OP>
inline T Combine(T a, T b) {
  using M = OpMath<T>;
  if constexpr (OP == ScatterOp::kAssign) {
    return b;
  } else if constexpr (std::is_same_v<T, bool>) {
    return OP == ScatterOp::kAdd || OP == ScatterOp::kMax ? (a || b) : (a && b);
  } else if constexpr (OP == ScatterOp::kAdd) {
    return static_cast<T>(static_cast<M>(a) + static_cast<M>(b));
  } else if constexpr (OP == ScatterOp::kMul) {
    return static_cast<T>(static_cast<M>(a) * static_cast<M>(b));
  } else {
    const M x = static_cast<M>(a), y = static_cast<M>(b);
    if constexpr (std::is_floating_point_v<M>) {
      if (y != y) return b;  // NaN propagates (PyTorch's amax/amin)
      if (x != x) return a;
    }
    return (OP == ScatterOp::kMax ? y > x : y < x) ? b : a;
  }
}

// self[p with `dim` replaced by index[p]] = Combine(that, src[p]) for every position p of index.
// index: contiguous int64; src: any strided view (stride 0 for a broadcast value).
// Every index is checked against self's size as it is read: a bad one stops its row and is
// reported in `bad` (callers check in-place targets beforehand, see CheckedIndex).
template <typename T, ScatterOp OP>
void ScatterLoop(const Tensor& self, int dim, const Tensor& index, const Tensor& src, BadIndex& bad) {
  const int nd = std::max(index.dim(), 1), last = nd - 1;
  const DimVector ist = ContiguousStrides(index.sizes());
  Odometer<3> o;
  o.nd = 0;
  for (int d = 0; d < nd; ++d) {
    if (d == dim || d == last) continue;
    o.sizes[o.nd] = index.sizes()[d];
    o.strides[0][o.nd] = self.strides()[d];
    o.strides[1][o.nd] = ist[d];
    o.strides[2][o.nd] = src.strides()[d];
    ++o.nd;
  }
  const int64_t base[3] = {0, 0, 0};
  const int64_t J = dim == last ? 1 : SizeAt(index, dim), K = SizeAt(index, last);
  const int64_t s_dim = StrideAt(self, dim), s_last = dim == last ? 0 : StrideAt(self, last);
  const int64_t i_dim = dim == last ? 0 : ist[dim];
  const int64_t r_dim = dim == last ? 0 : StrideAt(src, dim), r_last = StrideAt(src, last);
  T* sp = self.data<T>();
  const int64_t* ip = index.data<int64_t>();
  const T* rp = src.data<T>();
  const uint64_t size = SizeAt(self, dim);
  ForEachRow(o, base, J * K, [&](const int64_t* off) {
    T* s = sp + off[0];
    const int64_t* ix = ip + off[1];
    const T* r = rp + off[2];
    if (dim == last && s_dim == 1 && r_last == 1) {  // the common contiguous case, spelled out
      for (int64_t k = 0; k < K; ++k) {
        const int64_t j = ix[k];
        if (static_cast<uint64_t>(j) >= size) return bad.Note(j);
        s[j] = Combine<T, OP>(s[j], r[k]);
      }
      return;
    }
    for (int64_t j = 0; j < J; ++j) {
      for (int64_t k = 0; k < K; ++k) {
        const int64_t v = ix[j * i_dim + k];
        if (static_cast<uint64_t>(v) >= size) return bad.Note(v);
        T& t = s[v * s_dim + k * s_last];
        t = Combine<T, OP>(t, r[j * r_dim + k * r_last]);
      }
    }
  });
}

std::optional<int64_t> ScatterCpu(const Tensor& self, int dim, const Tensor& index, const Tensor& src, ScatterOp op) {
  BadIndex bad;
  if (op == ScatterOp::kAssign) {
    DispatchBySize(self.element_size(), [&](auto tag) {
      using U = typename std::decay_t<decltype(tag)>::type;
      ScatterLoop<U, ScatterOp::kAssign>(self, dim, index, src, bad);
    });
  } else if (IsComplex(self.dtype())) {
    OF_ASSERT(op == ScatterOp::kAdd || op == ScatterOp::kMul) << "complex scatter reduce (checked by the op)";
    DispatchComplex(self.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      if (op == ScatterOp::kAdd) ScatterLoop<T, ScatterOp::kAdd>(self, dim, index, src, bad);
      else ScatterLoop<T, ScatterOp::kMul>(self, dim, index, src, bad);
    });
  } else {
    DispatchAll(self.dtype(), [&](auto tag) {
      using T = typename std::decay_t<decltype(tag)>::type;
      switch (op) {
        case ScatterOp::kAdd: ScatterLoop<T, ScatterOp::kAdd>(self, dim, index, src, bad); break;
        case ScatterOp::kMul: ScatterLoop<T, ScatterOp::kMul>(self, dim, index, src, bad); break;
        case ScatterOp::kMax: ScatterLoop<T, ScatterOp::kMax>(self, dim, index, src, bad); break;
        default: ScatterLoop<T, ScatterOp::kMin>(self, dim, index, src, bad); break;
      }
    });
  }
  return bad.get();
}

// The CPU kernels in the registry (Note [Kernel registry]); the entries below reach them.
const bool kRegistered = [] {
  kernels::RegisterKernel<kernels::GatherDimKernel>(DeviceType::kCPU, &GatherCpu);
  kernels::RegisterKernel<kernels::IndexSelectRowsKernel>(DeviceType::kCPU, &IndexSelectCpu);
  kernels::RegisterKernel<kernels::ScatterDimKernel>(DeviceType::kCPU, &ScatterCpu);
  return true;
}();

}  // namespace

std::optional<int64_t> GatherDim(const Tensor& out, const Tensor& input, int dim, const Tensor& index) {
  return kernels::CallKernel<kernels::GatherDimKernel>(out.device(), out, input, dim, index);
}

std::optional<int64_t> IndexSelectRows(const Tensor& out, const Tensor& x, const Tensor& idx, int64_t outer,
                                       int64_t size, int64_t inner) {
  return kernels::CallKernel<kernels::IndexSelectRowsKernel>(out.device(), out, x, idx, outer, size, inner);
}

std::optional<int64_t> ScatterDim(const Tensor& self, int dim, const Tensor& index, const Tensor& src, ScatterOp op) {
  return kernels::CallKernel<kernels::ScatterDimKernel>(self.device(), self, dim, index, src, op);
}

}  // namespace oneflow
