// Note [Host fallback]: an op without a kernel for CUDA tensors still runs on them.
//
// A kernel entry that has no CUDA path reaches a host-only step (Tensor::raw_data(), a pointwise
// functor without a complex CUDA instantiation, cuBLAS asked for integers) and throws the
// NotImplementedError of OF_THROW_NO_KERNEL, which carries the device index. The generated
// differentiable entries (`functional::X`, tools/gen_autograd.py) call the kernel entry through
// OF_KERNEL_CALL: in a CUDA build that catches exactly this error and calls the kernel entry again
// with every CUDA tensor argument replaced by a host copy (and a CUDA `Device` argument by the
// CPU), then moves the outputs back to the device; an in-place op's result is copied back into
// its CUDA `self`. The fallback is below autograd: the backward node holds the CUDA tensors, and
// each op of the backward formula runs on the device or falls back by itself.
//
// Why a catch rather than a per-op flag: every op added later (and every dtype a CUDA kernel
// leaves out) runs on the GPU machine without anyone listing it, and the CUDA kernels replace the
// fallback op by op. It is exact (the CPU kernels are the reference) but synchronous and slow (two
// PCIe copies); a UserWarning names each op the first time it falls back, and
// ONEFLOW_CUDA_HOST_FALLBACK=0 turns the fallback off (the NotImplementedError is raised), which
// is how tests/test_cuda_ops.py lists the ops still without a CUDA kernel.
//
// Writes reach the CUDA tensors: every tensor argument whose host copy's version counter moved
// during the call (in-place kernels, batch norm's running statistics, the fused optimizer
// updates: every kernel that writes an input bumps it) is copied back and its own version bumped,
// so autograd's saved-tensor checks see the write; an in-place op's `self` is copied back always.
// Retrying is safe because kernels fail before they write: an op's host-only step comes before
// its results exist (out-of-place outputs are fresh), and in-place kernels touch `self` only in
// their last step. The CPU-only build compiles OF_KERNEL_CALL to the plain call.
//
// Kernels in the registry (Note [Kernel registry], kernels/registry.h) get the same policy without
// an exception: kernels::CallKernel asks the registry whether the device has a kernel for the
// call's dtype (a registration names the dtypes it covers: cuBLAS's GEMM no integers, cuDNN's
// convolutions and the atomic adds of index_add / pad's backward no complex, the cuSOLVER kernels
// not registered at all in a build without cuSOLVER) and runs the CPU kernel on host copies when
// it has none. This catch remains for the host-only steps that no registration describes:
//  - ops with no kernel interface yet, CPU-only by construction: linalg.eig
//    (ops/linalg_eig_ops.cpp), ldl_factor / ldl_solve (ops/linalg_ldl_ops.cpp), geqrf
//    (ops/linalg_householder_ops.cpp), lu_factor (ops/linalg_lu_ops.cpp), complex scans
//    (ops/scan_ops.cpp), complex reductions a build lacks (ops/reduce_ops.cpp), complex matrices
//    of the cuSOLVER ops (linalg::CheckInput, ops/linalg_ops.cpp);
//  - pointwise ops, which dispatch through their own slots, not the registry: a functor without a
//    CUDA instantiation for the dtype, or no CUDA pointwise kernel in the build
//    (ops/pointwise_checks.cpp);
//  - a CUDA kernel whose gap depends on an argument other than the dtype: scatter's add and
//    index_put's accumulate of complex values (the atomic adds of cuda/atomic.cuh), scatter's
//    multiply / max / min of complex values (cuda/index.cu);
//  - Tensor::raw_data() of a CUDA tensor in a CPU-only step (core/tensor.cpp).
#pragma once
#include <deque>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow::host_fallback {

#ifdef ONEFLOW_WITH_CUDA

// Enabled() / Report(op) / SetReporter: the policy, shared with the kernel registry
// (kernels/registry.h, Note [Kernel registry]).

Tensor ToHostTensor(const Tensor& t);
Tensor ToDeviceTensor(const Tensor& t, const Device& d);
void CopyBack(const Tensor& dst, const Tensor& src);  // and bumps dst's version

// First try: the arguments as they are.
struct Keep {
  template <typename T>
  T&& operator()(T&& v) const { return std::forward<T>(v); }
};

template <typename T> constexpr bool kTensorish =
    std::is_same_v<T, Tensor> || std::is_same_v<T, std::optional<Tensor>> || std::is_same_v<T, std::vector<Tensor>> ||
    std::is_same_v<T, Device> || std::is_same_v<T, std::optional<Device>>;

// Second try: host copies of the CUDA tensors (kept alive here, so that a `Tensor&` parameter
// binds to them), the CPU for a CUDA device argument.
class ToHost {
 public:
  Tensor& operator()(const Tensor& t) { return keep_.emplace_back(Host(t)); }
  std::optional<Tensor>& operator()(const std::optional<Tensor>& t) {
    return opt_.emplace_back(t ? std::optional<Tensor>(Host(*t)) : std::nullopt);
  }
  std::vector<Tensor>& operator()(const std::vector<Tensor>& ts) {
    std::vector<Tensor>& v = lists_.emplace_back();
    for (const Tensor& t : ts) v.push_back(Host(t));
    return v;
  }
  Device operator()(const Device& d) { return Host(d); }
  std::optional<Device> operator()(const std::optional<Device>& d) {
    return d ? std::optional<Device>(Host(*d)) : std::nullopt;
  }
  template <typename T>
    requires(!kTensorish<std::remove_cvref_t<T>>)
  T&& operator()(T&& v) const { return std::forward<T>(v); }

  const Device& device() const { return device_; }

  // Copies the host copies the call wrote (and `always`, an in-place op's self) into their
  // CUDA originals.
  void WriteBack(const Tensor* always = nullptr) {
    for (const Moved& m : moved_)
      if (m.host.storage()->version() != m.version || (always && always->is_same(m.host))) CopyBack(m.orig, m.host);
  }

 private:
  struct Moved {
    Tensor orig, host;
    uint32_t version;
  };
  Tensor Host(const Tensor& t) {
    if (!t.defined() || t.device().type != DeviceType::kCUDA) return t;
    device_ = t.device();
    Tensor h = ToHostTensor(t);
    moved_.push_back({t, h, h.storage()->version()});
    return h;
  }
  Device Host(const Device& d) {
    if (d.type != DeviceType::kCUDA) return d;
    device_ = d;
    return Device{};
  }
  Device device_;
  std::deque<Tensor> keep_;
  std::deque<std::optional<Tensor>> opt_;
  std::deque<std::vector<Tensor>> lists_;
  std::vector<Moved> moved_;
};

// The outputs, moved to the device the op ran for.
inline Tensor Back(const Tensor& t, const Device& d) { return ToDeviceTensor(t, d); }
inline std::vector<Tensor> Back(std::vector<Tensor> ts, const Device& d) {
  for (Tensor& t : ts) t = ToDeviceTensor(t, d);
  return ts;
}
template <typename... Ts>
std::tuple<Ts...> Back(std::tuple<Ts...> ts, const Device& d) {
  return std::apply([&](auto&... t) { return std::tuple<Ts...>(Back(t, d)...); }, ts);
}
template <typename T>
  requires(!kTensorish<T>)
T Back(T v, const Device&) { return v; }

inline bool ShouldFallBack(const Error& e) { return e.missing_kernel_device() >= 0 && Enabled(); }

// The kernel as called; on a "no kernel for this CUDA device" error, again on host copies, the
// result then going through `finish(host arguments, host result)`.
template <typename K, typename Finish>
decltype(auto) KernelOrHostThen(const char* op, K&& k, Finish&& finish) {
  try {
    return k(Keep{});
  } catch (const Error& e) {
    if (!ShouldFallBack(e)) throw;
  }
  Report(op);
  ToHost h;
  return finish(h, k(h));
}

template <typename K>
auto KernelOrHost(const char* op, K&& k) {
  return KernelOrHostThen(op, k, [](ToHost& h, auto r) {
    h.WriteBack();
    Device d = h.device();
    if (d.type != DeviceType::kCUDA) d = Device{DeviceType::kCUDA, 0};
    return Back(std::move(r), d);
  });
}

// In-place: the kernel modifies a host copy of `self`, which is then copied into `self`.
template <typename K>
Tensor& KernelOrHostInplace(const char* op, Tensor& self, K&& k) {
  return KernelOrHostThen(op, k, [&](ToHost& h, Tensor& host_self) -> Tensor& {
    h.WriteBack(&host_self);
    return self;
  });
}

#define OF_KERNEL_CALL(name, ...) \
  ::oneflow::host_fallback::KernelOrHost(name, [&](auto&& of_h) { return __VA_ARGS__; })
#define OF_KERNEL_CALL_INPLACE(name, self, ...) \
  ::oneflow::host_fallback::KernelOrHostInplace(name, self, [&](auto&& of_h) -> Tensor& { return __VA_ARGS__; })
#define OF_H(x) of_h(x)

#else

#define OF_KERNEL_CALL(name, ...) (__VA_ARGS__)
#define OF_KERNEL_CALL_INPLACE(name, self, ...) (__VA_ARGS__)
#define OF_H(x) (x)

#endif

}  // namespace oneflow::host_fallback
