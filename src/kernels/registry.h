// Note [Kernel registry]: one table of kernels per device.
//
// A kernel interface is declared once, in its kernels/<subject>.h, as a tag struct:
//
//   struct MaxPoolForwardKernel {
//     static constexpr const char* kName = "max_pool_forward";   // in messages and the warning
//     using Fn = void (*)(const PoolGeom&, const Tensor& x, const Tensor& y, const Tensor& indices);
//     using Writes = KernelWrites<2, 3>;                        // the tensor arguments it writes
//   };
//
// Implementations register under that tag for a device, with the dtypes they cover (all unless
// the registration names a DTypeSet: cuBLAS's GEMM takes no integers, cuDNN only floating
// point): the CPU ones from kernels/*.cpp in a static initialiser (their translation unit is
// always linked, since it also defines the entries that ops call), the CUDA ones from src/cuda/
// inside `cuda::RegisterKernels()`, which this registry calls once (an explicit call, so the
// linker keeps the CUDA objects of the static library). The dtype a call is selected by is the
// dtype of the kernel's first written argument (`Writes`: the output, or `self` of an in-place
// kernel, whose dtype is the one a kernel computes in); an undefined tensor selects nothing (any
// dtype).
//
// `HasKernel<K>(device, dtype)` answers whether the device has a kernel for the dtype;
// `CallKernel<K>(device, ...)` is the one place that acts on a "no":
//  - CUDA: the host fallback policy (Note [Host fallback] in ops/host_fallback.h, whose op-level
//    half asks RouteOfMissingKernel: the policy is this registry's, in every build). When it is on
//    (ONEFLOW_CUDA_HOST_FALLBACK, default 1) the CPU kernel runs on host copies of the CUDA
//    tensor arguments and the ones it writes (`Writes`) are copied back, with the once-per-kernel
//    UserWarning; when it is off, NotImplementedError.
//  - any other device: NotImplementedError naming the kernel and the device.
// The choice is made before the call (RouteOf), so no exception is thrown and caught to make it.
// The registrations are also indexed by name (KernelRoute below), which is how the Python tests
// ask the registry (tests/test_kernel_registry.py).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/tensor.h"

namespace oneflow::kernels {

inline constexpr int kNumDeviceTypes = 3;  // DeviceType: kCPU, kCUDA, kMeta

// The positions of the arguments a kernel writes (its outputs, or `self` of an in-place kernel).
template <int First, int... W>
struct KernelWrites {
  static constexpr int kFirst = First;
  static constexpr bool Has(int i) { return i == First || ((W == i) || ...); }
};

// The dtypes a registration covers, a bit per DType.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> ts) {
    for (DType t : ts) bits_ |= Bit(t);
  }
  static constexpr DTypeSet All() { return FromBits((1u << kNumDTypes) - 1); }
  constexpr bool Has(DType t) const { return (bits_ & Bit(t)) != 0; }
  constexpr DTypeSet Without(DTypeSet o) const { return FromBits(bits_ & ~o.bits_); }
  constexpr bool operator==(const DTypeSet&) const = default;

 private:
  static constexpr uint32_t Bit(DType t) { return 1u << static_cast<int>(t); }
  static constexpr DTypeSet FromBits(uint32_t b) {
    DTypeSet s;
    s.bits_ = b;
    return s;
  }
  uint32_t bits_ = 0;
};
inline constexpr DTypeSet kFloatingDTypes{DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
inline constexpr DTypeSet kComplexDTypes{DType::kComplex64, DType::kComplex128};

template <typename K>
struct KernelSlots {
  // Constant-initialised (all null, no dtype) before any registration runs.
  static inline typename K::Fn fn[kNumDeviceTypes] = {};
  static inline DTypeSet dtypes[kNumDeviceTypes] = {};
};

// What CallKernel does for a (kernel, device, dtype): the device's kernel, the CPU kernel on host
// copies (the host fallback policy), or the NotImplementedError.
enum class Route { kKernel, kHostFallback, kNoKernel };
Route RouteOf(bool has_kernel, DeviceType d);
const char* RouteName(Route r);  // "kernel", "host_fallback", "no_kernel"
// The op-level half of the policy (Note [Host fallback], ops/host_fallback.h): what a kernel entry
// that threw "no kernel for CUDA device `device`" (OF_THROW_NO_KERNEL; -1: another error) does
// next. kHostFallback where a CUDA backend is loaded and the fallback is on, else kNoKernel (the
// error stands: a CPU-only build has no CUDA tensor to move).
Route RouteOfMissingKernel(int device);

// Called once, before the first CUDA lookup (a no-op in a CPU-only build).
void EnsureDeviceKernelsRegistered();
// Whether the backend of device type `d` is in the build (it named itself through
// kernels/device_registrar.h at load); the CPU always is.
bool HasBackend(DeviceType d);

// The name index of every registration (KernelRoute, the tests): `name` is the tag's kName.
void IndexKernel(const char* name, DeviceType d, DTypeSet dtypes);

template <typename K>
void RegisterKernel(DeviceType d, typename K::Fn fn, DTypeSet dtypes = DTypeSet::All()) {
  KernelSlots<K>::fn[static_cast<int>(d)] = fn;
  KernelSlots<K>::dtypes[static_cast<int>(d)] = dtypes;
  IndexKernel(K::kName, d, dtypes);
}

template <typename K>
typename K::Fn LookupKernel(DeviceType d) {
  if (d == DeviceType::kCUDA) EnsureDeviceKernelsRegistered();
  return KernelSlots<K>::fn[static_cast<int>(d)];
}

// Whether device `d` has a kernel K for dtype `t`.
template <typename K>
bool HasKernel(DeviceType d, DType t) {
  return LookupKernel<K>(d) != nullptr && KernelSlots<K>::dtypes[static_cast<int>(d)].Has(t);
}

// The route of the kernel named `name` (a tag's kName) for (d, t) as CallKernel takes it; nullopt
// when no device registered that name.
std::optional<Route> KernelRoute(const std::string& name, DeviceType d, DType t);
// Every registered kernel name with the dtypes each device covers (empty: none registered).
std::vector<std::pair<std::string, std::vector<DTypeSet>>> RegisteredKernels();

// The NotImplementedError of a call no kernel of `d` covers: `t` the dtype it selected by, `other`
// whether the device has a kernel K for other dtypes (the message then names the dtype).
[[noreturn]] void ThrowNoKernel(const char* name, const Device& d, std::optional<DType> t, bool other);
Tensor HostCopy(const Tensor& t);                      // a CUDA tensor's host copy; others as they are
void CopyBackTo(const Tensor& dst, const Tensor& src);  // a host result into its CUDA original
Tensor DeviceCopy(const Tensor& t, const Device& d);    // a host result moved to `d`; others as they are

}  // namespace oneflow::kernels

// The host fallback policy (defined in registry.cpp; Note [Host fallback] for the op-level half).
namespace oneflow::host_fallback {
bool Enabled();               // ONEFLOW_CUDA_HOST_FALLBACK, default 1, read at each fallback
void Report(const char* op);  // the UserWarning, once per name (through the reporter)
void ForgetReported();        // the next fallback of every name warns again (tests)
using Reporter = void (*)(const char* message);
void SetReporter(Reporter r);  // installed by the Python module: a UserWarning
}  // namespace oneflow::host_fallback

namespace oneflow::kernels {

namespace detail {

template <typename T>
decltype(auto) ToHostArg(T&& v) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor>) {
    return HostCopy(v);
  } else if constexpr (std::is_same_v<U, std::optional<Tensor>>) {
    return v ? std::optional<Tensor>(HostCopy(*v)) : std::optional<Tensor>();
  } else if constexpr (std::is_same_v<U, std::vector<Tensor>>) {
    std::vector<Tensor> out;
    for (const Tensor& t : v) out.push_back(HostCopy(t));
    return out;
  } else {
    return std::forward<T>(v);
  }
}

template <typename T>
void CopyBackArg(const T& orig, const T& host) {
  if constexpr (std::is_same_v<T, Tensor>) {
    CopyBackTo(orig, host);
  } else if constexpr (std::is_same_v<T, std::optional<Tensor>>) {
    if (orig) CopyBackTo(*orig, *host);
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (size_t i = 0; i < orig.size(); ++i) CopyBackTo(orig[i], host[i]);
  } else {
    static_assert(!sizeof(T), "Writes names an argument that is not a tensor");
  }
}

// The dtype an argument selects by: a defined tensor's (a list's first), else none.
template <typename T>
std::optional<DType> DTypeOfArg(const T& v) {
  if constexpr (std::is_same_v<T, Tensor>) {
    return v.defined() ? std::optional<DType>(v.dtype()) : std::nullopt;
  } else if constexpr (std::is_same_v<T, std::optional<Tensor>>) {
    return v ? DTypeOfArg(*v) : std::nullopt;
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    return v.empty() ? std::nullopt : DTypeOfArg(v.front());
  } else {
    return std::nullopt;
  }
}

// The dtype a call of K selects its kernel by (Note [Kernel registry]).
template <typename K, typename... A>
std::optional<DType> SelectingDType(const A&... a) {
  constexpr int i = K::Writes::kFirst;
  static_assert(i < static_cast<int>(sizeof...(A)), "Writes names a position past the arguments");
  return DTypeOfArg(std::get<i>(std::forward_as_tuple(a...)));
}

// The CPU kernel on host copies of the arguments; the written ones copied back.
template <typename K, size_t... I, typename... A>
auto RunOnHost(std::index_sequence<I...>, A&&... a) {
  typename K::Fn cpu = KernelSlots<K>::fn[static_cast<int>(DeviceType::kCPU)];
  OF_ASSERT(cpu != nullptr) << K::kName << " has no CPU kernel";
  // Tensors become host copies (values); every other argument stays a reference to the caller's
  // (a Generator& keeps advancing the caller's generator).
  auto args = std::tuple<decltype(ToHostArg(std::forward<A>(a)))...>(ToHostArg(std::forward<A>(a))...);
  const auto orig = std::forward_as_tuple(a...);
  auto copy_back = [&] {
    ([&] {
      if constexpr (K::Writes::Has(static_cast<int>(I))) CopyBackArg(std::get<I>(orig), std::get<I>(args));
    }(), ...);
  };
  using R = decltype(cpu(std::get<I>(args)...));
  if constexpr (std::is_void_v<R>) {
    cpu(std::get<I>(args)...);
    copy_back();
  } else {
    R r = cpu(std::get<I>(args)...);
    copy_back();
    return r;
  }
}

}  // namespace detail

// The kernel of device `d` called with `a...`; the policy above when it has none for them.
template <typename K, typename... A>
decltype(auto) CallKernel(const Device& d, A&&... a) {
  const std::optional<DType> t = detail::SelectingDType<K>(a...);
  const bool any = LookupKernel<K>(d.type) != nullptr;
  switch (RouteOf(t ? HasKernel<K>(d.type, *t) : any, d.type)) {
    case Route::kKernel: return LookupKernel<K>(d.type)(std::forward<A>(a)...);
    case Route::kHostFallback:
      host_fallback::Report(K::kName);
      return detail::RunOnHost<K>(std::index_sequence_for<A...>{}, std::forward<A>(a)...);
    case Route::kNoKernel: break;
  }
  ThrowNoKernel(K::kName, d, t, any);
}

}  // namespace oneflow::kernels
