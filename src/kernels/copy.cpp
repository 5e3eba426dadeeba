// The cast/copy kernel: every (dst dtype, src dtype) pair, strided and broadcast via the engine.
#include "ops/copy.h"

#include <cstring>
#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "core/device_runtime.h"
#include "kernels/loop.h"
#include "kernels/move.h"
#include "decl/empty.h"

namespace oneflow {

namespace {

// Contiguous float <-> float16 runs through the CPU's conversion instructions where the build
// has them (F16C: IEEE round to nearest even, the software conversion's results; NaN payloads
// are kept where the software one makes them canonical). Returns false to run the plain loop.
template <typename D, typename S>
bool ConvertRun(D* o, const S* a, int64_t n) {
#if defined(__F16C__)
  if constexpr (std::is_same_v<D, Half> && std::is_same_v<S, float>) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i), _mm256_cvtps_ph(_mm256_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) o[i] = Half(a[i]);
    return true;
  } else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, Half>) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(o + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i))));
    for (; i < n; ++i) o[i] = static_cast<float>(a[i]);
    return true;
  }
#endif
  (void)o, (void)a, (void)n;
  return false;
}

// Complex to real keeps the real part (PyTorch warns and does the same); to bool tests both parts.
template <typename D, typename S>
D ConvertOne(S v) {
  if constexpr (kIsComplexT<D>) {
    using V = typename D::value_type;
    if constexpr (kIsComplexT<S>) return D(static_cast<V>(v.real()), static_cast<V>(v.imag()));
    else return D(static_cast<V>(static_cast<OpMath<S>>(v)), V(0));
  } else if constexpr (kIsComplexT<S>) {
    if constexpr (std::is_same_v<D, bool>) return v != S(0);
    else return ConvertOne<D, typename S::value_type>(v.real());
  } else if constexpr (std::is_same_v<D, bool>) {
    return static_cast<OpMath<S>>(v) != OpMath<S>(0);
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    return D(static_cast<float>(static_cast<OpMath<S>>(v)));
  } else {
    return static_cast<D>(static_cast<OpMath<S>>(v));
  }
}
}  // namespace

Tensor MovedTo(const Tensor& t, const Device& device) {
  if (t.device() == device && t.device().type == device.type) return t;
  Tensor out = Empty(t.sizes(), t.dtype(), device);
  CopyInto(out, t);
  return out;
}

namespace {
void FreePinned(void*, void* data, size_t nbytes) { CudaRuntime()->pinned_free(data, nbytes); }
}  // namespace

// Pinned memory through the CUDA runtime's table (Note [Device runtime]).
Tensor PinnedCopy(const Tensor& t) {
  OF_CHECK(t.device().type == DeviceType::kCPU) << "pin_memory(): cannot pin a '" << t.device().str()
                                                << "' tensor, only dense CPU tensors can be pinned";
  const DeviceRuntime* rt = CudaRuntime();
  OF_CHECK(rt != nullptr) << "pin_memory(): this build has no CUDA backend (pinned memory is for uploads to a GPU)";
  OF_CHECK(rt->device_count() > 0) << "pin_memory(): no CUDA device is available to pin memory for";
  const size_t nbytes = static_cast<size_t>(t.numel() * t.element_size());
  auto storage = MakeIntrusive<Storage>(rt->pinned_alloc(nbytes), nbytes, Device{}, &FreePinned, nullptr);
  Tensor out(MakeIntrusive<TensorImpl>(std::move(storage), 0, t.sizes(), ContiguousStrides(t.sizes()), t.dtype()));
  CopyInto(out, t);
  return out;
}

bool IsPinned(const Tensor& t) {
  const DeviceRuntime* rt = CudaRuntime();
  return rt != nullptr && t.device().type == DeviceType::kCPU && t.numel() > 0 && rt->device_count() > 0 &&
         rt->is_pinned(t.raw_data());
}

namespace {
template <typename T>
Tensor VectorOf(const std::vector<T>& v, const Device& device) {
  Tensor host = Empty({static_cast<int64_t>(v.size())}, DTypeOf<T>::value);
  if (!v.empty()) std::memcpy(host.data<T>(), v.data(), v.size() * sizeof(T));
  return MovedTo(host, device);
}
}  // namespace

Tensor VectorTensor(const std::vector<double>& v, const Device& device) { return VectorOf(v, device); }
Tensor VectorTensor(const std::vector<int64_t>& v, const Device& device) { return VectorOf(v, device); }

void CopyInto(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  OF_CHECK(BroadcastShapes(src.sizes(), dst.sizes()) == dst.sizes())
      << "the shape " << ShapeStr(src.sizes()) << " cannot be broadcast to " << ShapeStr(dst.sizes());
  const Tensor* ops[2] = {&dst, &src};
  LoopPlan plan = MakePlan(dst.sizes(), ops, 2, /*any_device=*/true);
  if (dst.device().type == DeviceType::kMeta) return;
  OF_CHECK(src.device().type != DeviceType::kMeta) << "cannot copy data out of a meta tensor";
  if (dst.device().type == DeviceType::kCUDA || src.device().type == DeviceType::kCUDA)
    return RequireCudaRuntime(Device{DeviceType::kCUDA, 0}).copy(dst, src);
  if (dst.dtype() == src.dtype() && plan.ndim == 1 && plan.strides[0][0] == dst.element_size() &&
      plan.strides[1][0] == dst.element_size()) {
    const int64_t es = dst.element_size();
    ParallelFor(0, plan.numel, kGrainSize * 4, [&](int64_t b, int64_t e) {
      std::memcpy(plan.base[0] + b * es, plan.base[1] + b * es, (e - b) * es);
    });
    return;
  }
  if (dst.dtype() == src.dtype()) return SameWidthCopy(plan, dst.element_size());
  DispatchAllAndComplex(dst.dtype(), [&](auto dtag) {
    using D = typename std::decay_t<decltype(dtag)>::type;
    DispatchAllAndComplex(src.dtype(), [&](auto stag) {
      using S = typename std::decay_t<decltype(stag)>::type;
      RunLoop(plan, [](char** p, const int64_t* s, int64_t n) {
        if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
          D* o = reinterpret_cast<D*>(p[0]);
          const S* a = reinterpret_cast<const S*>(p[1]);
          if (ConvertRun(o, a, n)) return;
          for (int64_t i = 0; i < n; ++i) o[i] = ConvertOne<D, S>(a[i]);
        } else {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<D*>(p[0] + i * s[0]) =
                ConvertOne<D, S>(*reinterpret_cast<const S*>(p[1] + i * s[1]));
        }
      });
    });
  });
}

Tensor CastTo(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = Empty(t.sizes(), dtype, t.device());
  CopyInto(out, t);
  if (t.is_wrapped_number()) out.impl()->is_wrapped_number_ = true;
  return out;
}

Tensor Contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = Empty(t.sizes(), t.dtype(), t.device());
  CopyInto(out, t);
  return out;
}

namespace {
bool IsHostScalar(const Tensor& t) {
  return t.is_wrapped_number() || (t.dim() == 0 && t.device().type == DeviceType::kCPU);
}
}  // namespace

void CheckSameDevice(const Tensor& a, const Tensor& b) {
  if (a.device() == b.device() || IsHostScalar(a) || IsHostScalar(b)) return;
  OF_THROW(kRuntime) << "Expected all tensors to be on the same device, but found at least two "
                        "devices, "
                     << a.device().str() << " and " << b.device().str() << "!";
}

const Device& OpDevice(std::initializer_list<const Tensor*> ops) {
  for (const Tensor* t : ops)
    if (!IsHostScalar(*t)) return t->device();
  return (*ops.begin())->device();
}

void FillWith(const Tensor& t, const Scalar& value) {
  if (t.numel() == 0 || t.device().type == DeviceType::kMeta) return;
  Tensor v = ScalarToTensor(value, t.dtype());
  CopyInto(t, v);
}

}  // namespace oneflow
