// Note [Host fallback] (ops/host_fallback.h): the non-template half.
#include "ops/host_fallback.h"

#ifdef ONEFLOW_WITH_CUDA
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include "ops/copy.h"

namespace oneflow::host_fallback {

namespace {
std::atomic<Reporter> reporter{nullptr};
}  // namespace

bool Enabled() {
  // Read at each fallback (rare, and tests switch it), not once per process.
  const char* v = std::getenv("ONEFLOW_CUDA_HOST_FALLBACK");
  return !(v && v[0] == '0');
}

void SetReporter(Reporter r) { reporter.store(r); }

namespace {
std::mutex seen_mu;
std::set<std::string> seen;  // guarded by seen_mu
}  // namespace

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

Tensor ToHostTensor(const Tensor& t) { return OnHost(t); }

Tensor ToDeviceTensor(const Tensor& t, const Device& d) {
  if (!t.defined() || t.device().type != DeviceType::kCPU) return t;
  return MovedTo(t, d);
}

void CopyBack(const Tensor& dst, const Tensor& src) {
  if (dst.is_same(src)) return;
  CopyInto(dst, src);
  dst.BumpVersion();
}

}  // namespace oneflow::host_fallback
#endif
