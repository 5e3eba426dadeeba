// Note [Kernel registry] (kernels/registry.h): the non-template half, and the host fallback
// policy that CallKernel and the op-level fallback (ops/host_fallback.h) share.
#include "kernels/registry.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "kernels/device_registrar.h"
#include "ops/copy.h"

namespace oneflow::kernels {

namespace {
// The backends' registration functions (kernels/device_registrar.h), set at load.
void (*device_kernels[kNumDeviceTypes])() = {};

// The name index: per kernel name, the dtypes of each device's registration (nullopt: none).
using IndexEntry = std::array<std::optional<DTypeSet>, kNumDeviceTypes>;
struct NameIndex {
  std::mutex mu;
  std::map<std::string, IndexEntry> entries;  // guarded by mu
};
NameIndex& Names() {
  // Constructed on first use: the CPU registrations run in static initialisers of other files.
  static NameIndex index;
  return index;
}
}  // namespace

void IndexKernel(const char* name, DeviceType d, DTypeSet dtypes) {
  NameIndex& n = Names();
  std::lock_guard<std::mutex> lock(n.mu);
  n.entries[name][static_cast<int>(d)] = dtypes;
}

Route RouteOf(bool has_kernel, DeviceType d) {
  if (has_kernel) return Route::kKernel;
  // The host fallback is a policy of CUDA tensors only: a CPU or meta tensor without a kernel has
  // nowhere else to run.
  if (d == DeviceType::kCUDA && host_fallback::Enabled()) return Route::kHostFallback;
  return Route::kNoKernel;
}

Route RouteOfMissingKernel(int device) {
  if (device < 0 || !HasBackend(DeviceType::kCUDA)) return Route::kNoKernel;
  return host_fallback::Enabled() ? Route::kHostFallback : Route::kNoKernel;
}

const char* RouteName(Route r) {
  switch (r) {
    case Route::kKernel: return "kernel";
    case Route::kHostFallback: return "host_fallback";
    case Route::kNoKernel: return "no_kernel";
  }
  return "?";
}

std::optional<Route> KernelRoute(const std::string& name, DeviceType d, DType t) {
  EnsureDeviceKernelsRegistered();
  NameIndex& n = Names();
  std::lock_guard<std::mutex> lock(n.mu);
  auto it = n.entries.find(name);
  if (it == n.entries.end()) return std::nullopt;
  const std::optional<DTypeSet>& dtypes = it->second[static_cast<int>(d)];
  return RouteOf(dtypes && dtypes->Has(t), d);
}

std::vector<std::pair<std::string, std::vector<DTypeSet>>> RegisteredKernels() {
  EnsureDeviceKernelsRegistered();
  NameIndex& n = Names();
  std::lock_guard<std::mutex> lock(n.mu);
  std::vector<std::pair<std::string, std::vector<DTypeSet>>> out;
  for (const auto& [name, per_device] : n.entries) {
    std::vector<DTypeSet> sets;
    for (const auto& s : per_device) sets.push_back(s.value_or(DTypeSet{}));
    out.emplace_back(name, std::move(sets));
  }
  return out;
}

DeviceKernels::DeviceKernels(DeviceType device, void (*register_all)()) {
  device_kernels[static_cast<int>(device)] = register_all;
}

bool HasBackend(DeviceType d) {
  return d == DeviceType::kCPU || device_kernels[static_cast<int>(d)] != nullptr;
}

void EnsureDeviceKernelsRegistered() {
  // Once, thread-safely; called before the first CUDA lookup, after every object's load-time
  // initialisation (a DeviceKernels object is one).
  static const bool registered = [] {
    for (auto* fn : device_kernels)
      if (fn) fn();
    return true;
  }();
  (void)registered;
}

void ThrowNoKernel(const char* name, const Device& d, std::optional<DType> t, bool other) {
  // The error of a missing kernel: NotImplementedError carrying the device index, the same as a
  // host-only step reached with a CUDA tensor (core/tensor.cpp ThrowHostAccess).
  if (other && t)
    OF_THROW_NO_KERNEL(d.index) << name << ": not implemented for " << DTypeName(*t) << " tensors on '" << d.str()
                                << "' (its kernel there takes other dtypes); move the inputs to the CPU with .cpu()";
  OF_THROW_NO_KERNEL(d.index) << name << ": not implemented for '" << d.str()
                              << "' tensors yet (this op has only a CPU kernel); move the inputs to "
                                 "the CPU with .cpu()";
  __builtin_unreachable();
}

Tensor HostCopy(const Tensor& t) {
  if (!t.defined() || t.device().type != DeviceType::kCUDA) return t;
  return OnHost(t);
}

void CopyBackTo(const Tensor& dst, const Tensor& src) {
  if (dst.defined() && !dst.is_same(src)) CopyInto(dst, src);
}

Tensor DeviceCopy(const Tensor& t, const Device& d) {
  if (!t.defined() || t.device().type != DeviceType::kCPU) return t;
  return MovedTo(t, d);
}

}  // namespace oneflow::kernels

namespace oneflow::host_fallback {

namespace {
std::atomic<Reporter> reporter{nullptr};
std::mutex seen_mu;
std::set<std::string> seen;  // guarded by seen_mu
}  // namespace

bool Enabled() {
  // Read at each fallback (rare, and tests switch it), not once per process.
  const char* v = std::getenv("ONEFLOW_CUDA_HOST_FALLBACK");
  return !(v && v[0] == '0');
}

void SetReporter(Reporter r) { reporter.store(r); }

void ForgetReported() {
  std::lock_guard<std::mutex> lock(seen_mu);
  seen.clear();
}

void Report(const char* op) {
  {
    std::lock_guard<std::mutex> lock(seen_mu);
    if (!seen.insert(op).second) return;
  }
  if (Reporter r = reporter.load()) {
    std::string msg = std::string("oneflow: ") + op +
                      "() has no CUDA kernel for these arguments yet; it ran on CPU copies of its "
                      "inputs (a copy each way and a device synchronization per call). Shown once per "
                      "op; ONEFLOW_CUDA_HOST_FALLBACK=0 raises NotImplementedError instead.";
    r(msg.c_str());
  }
}

}  // namespace oneflow::host_fallback
