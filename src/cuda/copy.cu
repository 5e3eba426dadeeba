// Copies and casts that involve a CUDA tensor (the CUDA side of ops/copy.h's CopyInto): device to
// device through the pointwise engine with an identity functor (any layout, broadcast, every
// dtype pair, complex included; same-dtype moves of any dtype as words of its width), host <-> device as contiguous byte copies with the layout and dtype work done on
// whichever side is cheaper to express (the engines of both devices already handle it).
#include "cuda/copy.h"

#include "cuda/pointwise.cuh"
#include "kernels/move.h"
#include "ops/copy.h"

namespace oneflow::cuda {

namespace {

struct IdentityFunctor {
  template <typename T> __host__ __device__ T operator()(T x) const { return x; }
};

// Casts with a complex side, as the CPU's ConvertOne (kernels/copy.cpp): complex to real keeps
// the real part, to bool tests both parts; real to complex has a zero imaginary part.
template <typename D>
struct ComplexCastFunctor {
  template <typename S>
  __device__ D operator()(S v) const {
    if constexpr (kIsCplx<D>) {
      using V = typename D::value_type;
      if constexpr (kIsCplx<S>) return D(static_cast<V>(v.real()), static_cast<V>(v.imag()));
      else return D(static_cast<V>(v), V(0));
    } else if constexpr (std::is_same_v<D, bool>) {
      return v.real() != 0 || v.imag() != 0;
    } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
      return D(static_cast<float>(v.real()));
    } else {
      return static_cast<D>(v.real());
    }
  }
};

// dst = src on one device, any layouts, src broadcast to dst, converted to dst's dtype. A host
// src must hold one element (it travels by value).
void DeviceCopy(const Tensor& dst, const Tensor& src) {
  const Tensor* ops[2] = {&dst, &src};
  LoopPlan plan = MakePlan(dst.sizes(), ops, 2, /*any_device=*/true);
  CudaLaunch l;
  l.device = dst.device().index;
  if (src.device().type == DeviceType::kCPU) {
    l.host[1] = true;
    std::memcpy(l.bits[1], src.raw_data(), src.element_size());
  }
  if (!l.host[1] && dst.dtype() == src.dtype() && plan.ndim == 1 &&
      plan.strides[0][0] == dst.element_size() && plan.strides[1][0] == dst.element_size()) {
    CopyD2D(plan.base[0], plan.base[1], plan.numel * dst.element_size(), l.device);
    return;
  }
  if (dst.dtype() == src.dtype() && (!l.host[1] || dst.element_size() <= 8)) {
    // One dtype: elements move as unsigned words of their width (complex ones included).
    DispatchWidth(dst.element_size(), [&](auto tag) {
      using U = typename std::decay_t<decltype(tag)>::type;
      LaunchPointwise<1, U, U>(plan, l, IdentityFunctor{});
    });
    return;
  }
  if (IsComplex(dst.dtype()) || IsComplex(src.dtype())) {  // Note [Complex on CUDA]
    DispatchAllAndComplex(dst.dtype(), [&](auto dtag) {
      using D = DevType<typename std::decay_t<decltype(dtag)>::type>;
      DispatchAllAndComplex(src.dtype(), [&](auto stag) {
        using S = DevType<typename std::decay_t<decltype(stag)>::type>;
        if constexpr (kIsCplx<D> || kIsCplx<S>) LaunchPointwise<1, D, S>(plan, l, ComplexCastFunctor<D>{});
      });
    });
    return;
  }
  DispatchAll(dst.dtype(), [&](auto dtag) {
    using D = typename std::decay_t<decltype(dtag)>::type;
    DispatchAll(src.dtype(), [&](auto stag) {
      using S = typename std::decay_t<decltype(stag)>::type;
      LaunchPointwise<1, D, S>(plan, l, IdentityFunctor{});
    });
  });
}

bool Dense(const Tensor& t) { return t.is_contiguous(); }

}  // namespace

void CopyInto(const Tensor& dst, const Tensor& src) {
  const bool dcuda = dst.device().type == DeviceType::kCUDA, scuda = src.device().type == DeviceType::kCUDA;
  if (dcuda && scuda && dst.device().index == src.device().index) return DeviceCopy(dst, src);
  if (dcuda && !scuda) {
    if (src.numel() == 1) return DeviceCopy(dst, src);  // a scalar (fill): by value
    if (Dense(dst) && Dense(src) && dst.dtype() == src.dtype() && dst.sizes() == src.sizes()) {
      CopyH2D(dst.raw_ptr(), src.raw_data(), dst.numel() * dst.element_size(), dst.device().index, false);
      return;
    }
    // Upload src as it is (contiguous), then broadcast / cast / lay out on the device.
    Tensor host = Contiguous(src);
    Tensor staged = Empty(host.sizes(), host.dtype(), dst.device());
    CopyH2D(staged.raw_ptr(), host.raw_data(), host.numel() * host.element_size(), dst.device().index, false);
    return DeviceCopy(dst, staged);
  }
  if (!dcuda && scuda) {
    if (Dense(dst) && Dense(src) && dst.dtype() == src.dtype() && dst.sizes() == src.sizes()) {
      CopyD2H(dst.raw_data(), src.raw_ptr(), dst.numel() * dst.element_size(), src.device().index);
      return;
    }
    Tensor dense = Contiguous(src);  // on the device
    Tensor host = Empty(dense.sizes(), dense.dtype(), Device());
    CopyD2H(host.raw_data(), dense.raw_ptr(), host.numel() * host.element_size(), src.device().index);
    return ::oneflow::CopyInto(dst, host);
  }
  // Between two CUDA devices: through the host (correct on any topology; peer copies later).
  Tensor host = Empty(src.sizes(), src.dtype(), Device());
  ::oneflow::CopyInto(host, src);
  ::oneflow::CopyInto(dst, host);
}

}  // namespace oneflow::cuda
