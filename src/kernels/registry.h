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
// Implementations register under that tag for a device: the CPU ones from kernels/*.cpp in a
// static initialiser (their translation unit is always linked, since it also defines the entries
// that ops call), the CUDA ones from src/cuda/ inside `cuda::RegisterKernels()`, which
// this registry calls once (an explicit call, so the linker keeps the CUDA objects of the static
// library). `LookupKernel<K>(device)` answers the function or nullptr; `CallKernel<K>(device, ...)`
// is the one place that acts on a nullptr:
//  - CUDA with no kernel registered: the host fallback policy (Note [Host fallback] in
//    ops/host_fallback.h). When it is on (ONEFLOW_CUDA_HOST_FALLBACK, default 1) the CPU kernel
//    runs on host copies of the CUDA tensor arguments and the ones it writes (`Writes`) are copied
//    back, with the once-per-kernel UserWarning; when it is off, NotImplementedError.
//  - any other device: NotImplementedError naming the kernel and the device.
// A kernel that is registered but leaves some dtype out still raises the "no kernel" error from
// inside (OF_THROW_NO_KERNEL), which the op-level fallback of the generated entries handles.
#pragma once
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "core/tensor.h"

namespace oneflow::kernels {

inline constexpr int kNumDeviceTypes = 3;  // DeviceType: kCPU, kCUDA, kMeta

// The positions of the arguments a kernel writes (its outputs, or `self` of an in-place kernel).
template <int... W>
struct KernelWrites {
  static constexpr bool Has(int i) { return ((W == i) || ...); }
};

template <typename K>
struct KernelSlots {
  // Constant-initialised (all null) before any registration runs.
  static inline typename K::Fn fn[kNumDeviceTypes] = {};
};

// Called once, before the first CUDA lookup (a no-op in a CPU-only build).
void EnsureDeviceKernelsRegistered();

template <typename K>
void RegisterKernel(DeviceType d, typename K::Fn fn) {
  KernelSlots<K>::fn[static_cast<int>(d)] = fn;
}

template <typename K>
typename K::Fn LookupKernel(DeviceType d) {
  if (d == DeviceType::kCUDA) EnsureDeviceKernelsRegistered();
  return KernelSlots<K>::fn[static_cast<int>(d)];
}

[[noreturn]] void ThrowNoKernel(const char* name, const Device& d);
Tensor HostCopy(const Tensor& t);                      // a CUDA tensor's host copy; others as they are
void CopyBackTo(const Tensor& dst, const Tensor& src);  // a host result into its CUDA original

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

// The kernel of device `d` called with `a...`; the policy above when there is none.
template <typename K, typename... A>
decltype(auto) CallKernel(const Device& d, A&&... a) {
  if (typename K::Fn fn = LookupKernel<K>(d.type)) return fn(std::forward<A>(a)...);
  if (d.type == DeviceType::kCUDA && host_fallback::Enabled()) {
    host_fallback::Report(K::kName);
    return detail::RunOnHost<K>(std::index_sequence_for<A...>{}, std::forward<A>(a)...);
  }
  ThrowNoKernel(K::kName, d);
}

}  // namespace oneflow::kernels
