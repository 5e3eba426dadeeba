// Index kernels on CUDA (cuda/index.h). Gathers are one thread per output element; the adds are
// one thread per source element with atomic adds (their rounding order, unlike their value, is
// not fixed: several sources may land on one element). Plain scatters with repeated indices
// keep one of the written values, as on PyTorch's CUDA backend.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "core/shape.h"
#include "cuda/atomic.cuh"
#include "cuda/index.h"
#include "cuda/launch.cuh"
#include "cuda/runtime.h"
#include "kernels/move.h"

namespace oneflow::cuda {

namespace {

constexpr int kThreads = kGridThreads;

// A view's sizes and element strides, by value into kernels.
struct View {
  int nd = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
};

View ViewOf(const Tensor& t, const DimVector& sizes) {
  View v;
  v.nd = static_cast<int>(sizes.size());
  for (int d = 0; d < v.nd; ++d) {
    v.sizes[d] = sizes[d];
    v.strides[d] = d < t.dim() ? t.strides()[d] : 0;
  }
  return v;
}

template <typename U>
__global__ void GatherKernel(U* out, const U* in, View iv, View xv, int dim, const int64_t* index, int64_t n) {
  OF_GRID_LOOP(e, n) {
    int64_t rem = e, off = 0;
    for (int d = iv.nd - 1; d >= 0; --d) {
      const int64_t c = rem % iv.sizes[d];
      rem /= iv.sizes[d];
      off += (d == dim ? index[e] : c) * xv.strides[d];
    }
    out[e] = in[off];
  }
}

// scatter's multiply / max / min on one element: the CPU's Combine (ops/scatter_ops.cpp), NaN
// taking over for max / min; bools multiply and take the min as an and, the max as an or.
template <typename T, int kOp>
__device__ inline T ScatterCombine(T a, T b) {
  using M = OpMath<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return kOp == 3 ? (a || b) : (a && b);
  } else if constexpr (kOp == 2) {
    return static_cast<T>(static_cast<M>(a) * static_cast<M>(b));
  } else {
    const M x = static_cast<M>(a), y = static_cast<M>(b);
    if constexpr (std::is_floating_point_v<M>) {
      if (y != y) return b;
      if (x != x) return a;
    }
    return (kOp == 3 ? y > x : y < x) ? b : a;
  }
}

template <typename T, int kOp>  // 0 store, 1 add, 2 multiply, 3 max, 4 min (ScatterOp's order)
__global__ void ScatterKernel(T* self, View sv, const T* src, View rv, View iv, int dim, const int64_t* index,
                              int64_t n) {
  OF_GRID_LOOP(e, n) {
    int64_t rem = e, so = 0, ro = 0;
    for (int d = iv.nd - 1; d >= 0; --d) {
      const int64_t c = rem % iv.sizes[d];
      rem /= iv.sizes[d];
      so += (d == dim ? index[e] : c) * sv.strides[d];
      ro += c * rv.strides[d];
    }
    if constexpr (kOp == 0) {
      self[so] = src[ro];
    } else if constexpr (kOp == 1) {
      AtomicAdd(self + so, static_cast<OpMath<T>>(src[ro]));
    } else {
      const T v = src[ro];
      AtomicUpdate(self + so, [v](T cur) { return ScatterCombine<T, kOp>(cur, v); });
    }
  }
}

template <typename U>
__global__ void IndexRowsKernel(U* out, const U* x, const int64_t* idx, int64_t n, int64_t size, int64_t inner,
                                int64_t total) {
  OF_GRID_LOOP(e, total) {
    const int64_t i = e % inner, j = e / inner % n, o = e / inner / n;
    out[e] = x[(o * size + idx[j]) * inner + i];
  }
}

template <typename T>
__global__ void IndexRowsAddKernel(T* self, const T* src, const int64_t* idx, int64_t n, int64_t size, int64_t inner,
                                   double alpha, double alpha_imag, int64_t skip, const double* scale, int64_t total) {
  using M = OpMath<T>;
  OF_GRID_LOOP(e, total) {
    const int64_t i = e % inner, j = e / inner % n, o = e / inner / n, r = idx[j];
    if (r == skip) continue;
    const double s = scale ? scale[j] : 1.0, f = alpha * s;
    M v;
    if constexpr (kIsDeviceComplex<M>) {  // the complex factor (alpha's imaginary part too)
      v = f == 1.0 && alpha_imag == 0.0 ? src[e] : M(f, alpha_imag * s) * src[e];
    } else {
      v = f == 1.0 ? static_cast<M>(src[e]) : static_cast<M>(static_cast<M>(f) * static_cast<M>(src[e]));
    }
    AtomicAdd(self + (o * size + r) * inner + i, v);
  }
}

// Integers are added exactly: an integer alpha * src in the integer type.
template <>
__global__ void IndexRowsAddKernel<int64_t>(int64_t* self, const int64_t* src, const int64_t* idx, int64_t n,
                                            int64_t size, int64_t inner, double alpha, double, int64_t skip,
                                            const double* scale, int64_t total) {
  OF_GRID_LOOP(e, total) {
    const int64_t i = e % inner, j = e / inner % n, o = e / inner / n, r = idx[j];
    if (r != skip) AtomicAdd(self + (o * size + r) * inner + i, static_cast<int64_t>(alpha) * src[e]);
  }
}

// Result element e of advanced indexing to its element offset in self's storage (AdvGeom).
struct AdvWalk {
  const int64_t *offs, *pre, *post;
  int64_t n, q, inner, is;
  __device__ int64_t operator()(int64_t e) const {
    const int64_t i = e % inner, r = e / inner, j = r % q, k = r / q % n, p = r / q / n;
    return pre[p] + offs[k] + post[j] + i * is;
  }
};

AdvWalk WalkOf(const Tensor& geo, const AdvGeom& g) {
  const int64_t* d = geo.ptr<int64_t>();
  return AdvWalk{d, d + g.n, d + g.n + g.pre, g.n, g.post, g.inner, g.inner_stride};
}

template <typename U>
__global__ void AdvGatherKernel(U* out, const U* base, AdvWalk w, int64_t total) {
  OF_GRID_LOOP(e, total) out[e] = base[w(e)];
}

template <typename T, int kMode>  // 0: store, 1: atomic add, 2: or (bool)
__global__ void AdvPutKernel(T* base, const T* values, bool scalar, AdvWalk w, int64_t total) {
  OF_GRID_LOOP(e, total) {
    const T v = values[scalar ? 0 : e];
    T* dst = base + w(e);
    if constexpr (kMode == 0) *dst = v;
    else if constexpr (kMode == 1) AtomicAdd(dst, static_cast<OpMath<T>>(v));
    else if (v) *dst = v;  // every writer stores the same true: no race on the value
  }
}

cudaStream_t StreamOf(const Tensor& t) { return static_cast<cudaStream_t>(Stream(t.device().index)); }

}  // namespace

void GatherDim(const Tensor& out, const Tensor& input, int dim, const Tensor& index) {
  const int64_t n = out.numel();
  if (n == 0) return;
  DeviceGuard guard(out.device().index);
  const View iv = ViewOf(index, index.dim() == 0 ? DimVector{1} : index.sizes());
  const View xv = ViewOf(input, input.dim() == 0 ? DimVector{1} : input.sizes());
  DispatchWidth(out.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    GatherKernel<U><<<GridFor(n), kThreads, 0, StreamOf(out)>>>(
        reinterpret_cast<U*>(out.raw_ptr()), reinterpret_cast<const U*>(input.raw_ptr()), iv, xv, dim, index.ptr<int64_t>(), n);
  });
  CheckLaunch("the gather kernel");
}

void ScatterDim(const Tensor& self, int dim, const Tensor& index, const Tensor& src, bool add) {
  const int64_t n = index.numel();
  if (n == 0) return;
  DeviceGuard guard(self.device().index);
  const DimVector shape = index.dim() == 0 ? DimVector{1} : index.sizes();
  const View sv = ViewOf(self, shape), rv = ViewOf(src, shape), iv = ViewOf(index, shape);
  if (add) {
    DispatchAtomic(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ScatterKernel<T, 1><<<GridFor(n), kThreads, 0, StreamOf(self)>>>(
          self.ptr<T>(), sv, src.ptr<T>(), rv, iv, dim, index.ptr<int64_t>(), n);
    });
  } else {
    DispatchWidth(self.element_size(), [&](auto tag) {
      using U = typename std::decay_t<decltype(tag)>::type;
      ScatterKernel<U, 0><<<GridFor(n), kThreads, 0, StreamOf(self)>>>(
          reinterpret_cast<U*>(self.raw_ptr()), sv, reinterpret_cast<const U*>(src.raw_ptr()), rv, iv, dim,
          index.ptr<int64_t>(), n);
    });
  }
  CheckLaunch("the scatter kernel");
}

void ScatterDimReduce(const Tensor& self, int dim, const Tensor& index, const Tensor& src, int op) {
  const int64_t n = index.numel();
  if (n == 0) return;
  if (IsComplex(self.dtype()))
    OF_THROW_NO_KERNEL(self.device().index) << "scatter's multiply / max / min of complex CUDA tensors";
  DeviceGuard guard(self.device().index);
  const DimVector shape = index.dim() == 0 ? DimVector{1} : index.sizes();
  const View sv = ViewOf(self, shape), rv = ViewOf(src, shape), iv = ViewOf(index, shape);
  DispatchAll(self.dtype(), [&](auto tag) {
    using T = typename std::decay_t<decltype(tag)>::type;
    const auto launch = [&](auto kernel) {
      kernel<<<GridFor(n), kThreads, 0, StreamOf(self)>>>(self.ptr<T>(), sv, src.ptr<T>(), rv, iv, dim,
                                                         index.ptr<int64_t>(), n);
    };
    if (op == 2) launch(ScatterKernel<T, 2>);
    else if (op == 3) launch(ScatterKernel<T, 3>);
    else launch(ScatterKernel<T, 4>);
  });
  CheckLaunch("the scatter reduce kernel");
}

void IndexRows(const Tensor& out, const Tensor& x, const Tensor& idx, int64_t outer, int64_t size, int64_t inner) {
  const int64_t n = idx.numel(), total = outer * n * inner;
  if (total == 0) return;
  DeviceGuard guard(out.device().index);
  DispatchWidth(out.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    IndexRowsKernel<U><<<GridFor(total), kThreads, 0, StreamOf(out)>>>(
        reinterpret_cast<U*>(out.raw_ptr()), reinterpret_cast<const U*>(x.raw_ptr()), idx.ptr<int64_t>(), n, size, inner, total);
  });
  CheckLaunch("the index_select kernel");
}

void IndexRowsAdd(const Tensor& self, const Tensor& src, const Tensor& idx, int64_t outer, int64_t size,
                  int64_t inner, const Scalar& alpha, int64_t skip, const Tensor& scale) {
  const int64_t n = idx.numel(), total = outer * n * inner;
  if (total == 0) return;
  DeviceGuard guard(self.device().index);
  DispatchAtomic(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    IndexRowsAddKernel<T><<<GridFor(total), kThreads, 0, StreamOf(self)>>>(
        self.ptr<T>(), src.ptr<T>(), idx.ptr<int64_t>(), n, size, inner, alpha.ToDouble(), alpha.ImagPart(), skip,
        scale.defined() ? scale.ptr<double>() : nullptr, total);
  });
  CheckLaunch("the index_add kernel");
}

void AdvGather(const char* base, const Tensor& out, const Tensor& geo, const AdvGeom& g) {
  const int64_t total = out.numel();
  if (total == 0) return;
  DeviceGuard guard(out.device().index);
  DispatchWidth(out.element_size(), [&](auto tag) {
    using U = typename std::decay_t<decltype(tag)>::type;
    AdvGatherKernel<U><<<GridFor(total), kThreads, 0, StreamOf(out)>>>(
        reinterpret_cast<U*>(out.raw_ptr()), reinterpret_cast<const U*>(base), WalkOf(geo, g), total);
  });
  CheckLaunch("the advanced indexing kernel");
}

void AdvPut(char* base, const Tensor& values, bool scalar, const Tensor& geo, const AdvGeom& g, bool accumulate) {
  const int64_t total = g.pre * g.n * g.post * g.inner;
  if (total == 0) return;
  DeviceGuard guard(values.device().index);
  const AdvWalk w = WalkOf(geo, g);
  const cudaStream_t s = StreamOf(values);
  if (!accumulate) {
    DispatchWidth(values.element_size(), [&](auto tag) {
      using U = typename std::decay_t<decltype(tag)>::type;
      AdvPutKernel<U, 0><<<GridFor(total), kThreads, 0, s>>>(reinterpret_cast<U*>(base),
                                                              values.ptr<U>(), scalar, w, total);
    });
  } else if (values.dtype() == DType::kBool) {
    AdvPutKernel<bool, 2><<<GridFor(total), kThreads, 0, s>>>(reinterpret_cast<bool*>(base),
                                                               values.ptr<bool>(), scalar, w, total);
  } else {
    DispatchAtomic(values.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      AdvPutKernel<T, 1><<<GridFor(total), kThreads, 0, s>>>(reinterpret_cast<T*>(base),
                                                              values.ptr<T>(), scalar, w, total);
    });
  }
  CheckLaunch("the index_put kernel");
}

}  // namespace oneflow::cuda
