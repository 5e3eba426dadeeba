// Note [Host fallback]: an op without a kernel for CUDA tensors still runs on them.
//
// A kernel entry that has no CUDA path reaches a host-only step (Tensor::raw_data(), a pointwise
// functor without a complex CUDA instantiation, cuBLAS asked for integers) and throws the
// NotImplementedError of OF_THROW_NO_KERNEL, which carries the device index. The generated
// differentiable entries (`functional::X`, tools/gen_autograd.py) call the kernel entry through
// OF_KERNEL_CALL, which catches exactly this error and asks the kernel registry what to do
// (kernels::RouteOfMissingKernel, kernels/registry.h: the policy, one place for both halves):
// where a CUDA backend is loaded and the fallback is on, it calls the kernel entry again with
// every CUDA tensor argument replaced by a host copy (and a CUDA `Device` argument by the CPU),
// then moves the outputs back to the device; an in-place op's result is copied back into its CUDA
// `self`. Otherwise the error stands. The fallback is below autograd: the backward node holds the
// CUDA tensors, and each op of the backward formula runs on the device or falls back by itself.
//
// Why a catch rather than a per-op flag: every op added later (and every dtype a CUDA kernel
// leaves out) runs on the GPU machine without anyone listing it, and the CUDA kernels replace the
// fallback op by op. It is exact (the CPU kernels are the reference) but synchronous and slow (two
// PCIe copies); a UserWarning names each op the first time it falls back, and
// ONEFLOW_CUDA_HOST_FALLBACK=0 turns the fallback off (the NotImplementedError is raised), which
// is how tests/test_cuda_ops.py lists the ops still without a CUDA kernel.
//
// Why no build flag: this header compiles the same in every build. A CPU-only build has no CUDA
// backend, so the registry answers "the error stands" and the retry never runs (a CPU or meta
// tensor has nowhere else to go); the try costs nothing on the path that does not throw. The
// device is a fact the registry learns at load (kernels/device_registrar.h), not a macro here.
//
// Writes reach the CUDA tensors: every tensor argument whose host copy's version counter moved
// during the call (in-place kernels, batch norm's running statistics, the fused optimizer
// updates: every kernel that writes an input bumps it) is copied back and its own version bumped,
// so autograd's saved-tensor checks see the write; an in-place op's `self` is copied back always.
// Retrying is safe because kernels fail before they write: an op's host-only step comes before
// its results exist (out-of-place outputs are fresh), and in-place kernels touch `self` only in
// their last step.
//
// Kernels in the registry (Note [Kernel registry], kernels/registry.h) get the same policy without
// an exception: kernels::CallKernel asks the registry whether the device has a kernel for the
// call's dtype (a registration names the dtypes it covers: cuBLAS's GEMM no integers, cuDNN's
// convolutions no complex, the cuSOLVER kernels not registered at all in a build without
// cuSOLVER) and runs the CPU kernel on host copies when it has none. This catch remains for the
// host-only steps that no registration describes:
//  - ops with no kernel interface yet, CPU-only by construction: linalg.eig
//    (ops/linalg_eig_ops.cpp), ldl_factor / ldl_solve (ops/linalg_ldl_ops.cpp), geqrf
//    (ops/linalg_householder_ops.cpp), lu_factor (ops/linalg_lu_ops.cpp), complex scans
//    (ops/scan_ops.cpp), complex reductions a build lacks (ops/reduce_ops.cpp), complex matrices
//    of the cuSOLVER ops (linalg::CheckInput, ops/linalg_ops.cpp);
//  - pointwise ops, which dispatch through their own slots, not the registry: a functor without a
//    CUDA instantiation for the dtype, or no CUDA pointwise kernel in the build
//    (ops/pointwise_checks.cpp);
//  - a CUDA kernel whose gap depends on an argument other than the dtype: scatter's multiply /
//    max / min of complex values (cuda/index.cu);
//  - Tensor::raw_data() of a CUDA tensor in a CPU-only step (core/tensor.cpp).
#pragma once
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "kernels/registry.h"

namespace oneflow::host_fallback {

template <typename T> constexpr bool kTensorish =
    std::is_same_v<T, Tensor> || std::is_same_v<T, std::optional<Tensor>> || std::is_same_v<T, std::vector<Tensor>> ||
    std::is_same_v<T, Device> || std::is_same_v<T, std::optional<Device>>;

// The retry's host copies of the CUDA tensors (kept alive here, so that a reference parameter
// binds to them), the CPU for a CUDA device argument, and what to copy back. Out of line
// (ops/host_fallback.cpp): every generated entry has a retry, and only the fallback runs it.
class HostCopies {
 public:
  HostCopies();
  ~HostCopies();
  HostCopies(const HostCopies&) = delete;
  HostCopies& operator=(const HostCopies&) = delete;

  Tensor& Keep(const Tensor& t);
  const std::optional<Tensor>& Keep(const std::optional<Tensor>& t);
  const std::vector<Tensor>& Keep(const std::vector<Tensor>& ts);
  Device Host(const Device& d);

  // The device the op ran for (its first CUDA argument; cuda:0 when it had none).
  Device device() const;
  // Copies the host copies the call wrote (and `always`, an in-place op's self) into their
  // CUDA originals, bumping their versions.
  void WriteBack(const Tensor* always = nullptr);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The arguments of one call of the kernel entry (OF_H): as they are on the first try, the host
// copies on the retry. One type for both tries, so that each op's call of its kernel entry is
// instantiated once: with a type per try (as before this header served every build) the
// generated entries compiled ~45% slower than a plain call, with one type and the retry's work
// out of line ~30% (functional_math.cpp, user time); the first try allocates nothing.
class Args {
 public:
  Args() = default;
  explicit Args(HostCopies& h) : host_(&h) {}
  Tensor& operator()(Tensor& t) { return host_ ? host_->Keep(t) : t; }
  const Tensor& operator()(const Tensor& t) { return host_ ? host_->Keep(t) : t; }
  const std::optional<Tensor>& operator()(const std::optional<Tensor>& t) { return host_ ? host_->Keep(t) : t; }
  const std::vector<Tensor>& operator()(const std::vector<Tensor>& ts) { return host_ ? host_->Keep(ts) : ts; }
  Device operator()(const Device& d) { return host_ ? host_->Host(d) : d; }
  std::optional<Device> operator()(const std::optional<Device>& d) {
    return d && host_ ? std::optional<Device>(host_->Host(*d)) : d;
  }
  template <typename T>
    requires(!kTensorish<std::remove_cvref_t<T>>)
  T&& operator()(T&& v) const { return std::forward<T>(v); }

 private:
  HostCopies* host_ = nullptr;
};

// The outputs, moved to the device the op ran for.
Tensor Back(const Tensor& t, const Device& d);
std::vector<Tensor> Back(std::vector<Tensor> ts, const Device& d);
template <typename... Ts>
std::tuple<Ts...> Back(std::tuple<Ts...> ts, const Device& d) {
  return std::apply([&](auto&... t) { return std::tuple<Ts...>(Back(t, d)...); }, ts);
}
template <typename T>
  requires(!kTensorish<T>)
T Back(T v, const Device&) { return v; }

inline bool ShouldFallBack(const Error& e) {
  return kernels::RouteOfMissingKernel(e.missing_kernel_device()) == kernels::Route::kHostFallback;
}

// The kernel as called; on a "no kernel for this CUDA device" error, again on host copies, the
// result then going through `finish(host arguments, host result)`.
template <typename K, typename Finish>
decltype(auto) KernelOrHostThen(const char* op, K&& k, Finish&& finish) {
  try {
    return k(Args{});
  } catch (const Error& e) {
    if (!ShouldFallBack(e)) throw;
  }
  Report(op);
  HostCopies h;
  return finish(h, k(Args{h}));
}

template <typename K>
auto KernelOrHost(const char* op, K&& k) {
  return KernelOrHostThen(op, k, [](HostCopies& h, auto r) {
    h.WriteBack();
    return Back(std::move(r), h.device());
  });
}

// In-place: the kernel modifies a host copy of `self`, which is then copied into `self`.
template <typename K>
Tensor& KernelOrHostInplace(const char* op, Tensor& self, K&& k) {
  return KernelOrHostThen(op, k, [&](HostCopies& h, Tensor& host_self) -> Tensor& {
    h.WriteBack(&host_self);
    return self;
  });
}

#define OF_KERNEL_CALL(name, ...) \
  ::oneflow::host_fallback::KernelOrHost(name, [&](::oneflow::host_fallback::Args of_h) { return __VA_ARGS__; })
#define OF_KERNEL_CALL_INPLACE(name, self, ...) \
  ::oneflow::host_fallback::KernelOrHostInplace(name, self,                 \
                                                [&](::oneflow::host_fallback::Args of_h) -> Tensor& { return __VA_ARGS__; })
#define OF_H(x) of_h(x)

}  // namespace oneflow::host_fallback
