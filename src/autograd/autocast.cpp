#include "autograd/autocast.h"

#include <unordered_map>

#include "autograd/functional.h"
#include "autograd/node.h"
#include "decl/cast.h"

namespace oneflow::autocast {

namespace {

struct State {
  bool enabled[2] = {false, false};                      // cpu, cuda
  DType dtype[2] = {DType::kBFloat16, DType::kFloat16};  // PyTorch's defaults per device type
  bool cache_enabled = true;
  int nesting = 0;
  int excluded = 0;
  // Casts of weights (float32 leaves requiring grad) made in the current autocast region: the
  // source is kept alive so its address can't be reused while the entry exists.
  std::unordered_map<TensorImpl*, std::pair<Tensor, Tensor>> cache;
};

thread_local State state;

int Slot(DeviceType d) { return d == DeviceType::kCUDA ? 1 : 0; }

void Refresh() { detail::g_active = (state.enabled[0] || state.enabled[1]) && state.excluded == 0; }

bool Eligible(const Tensor& t, DeviceType dev) {
  return t.defined() && !t.is_wrapped_number() && IsFloating(t.dtype()) &&
         t.dtype() != DType::kFloat64 && t.device().type == dev;
}

}  // namespace

bool IsEnabled(DeviceType d) { return state.enabled[Slot(d)]; }
void SetEnabled(DeviceType d, bool on) {
  state.enabled[Slot(d)] = on;
  Refresh();
}
DType GetDType(DeviceType d) { return state.dtype[Slot(d)]; }
void SetDType(DeviceType d, DType t) { state.dtype[Slot(d)] = t; }
bool IsCacheEnabled() { return state.cache_enabled; }
void SetCacheEnabled(bool on) { state.cache_enabled = on; }
int IncrementNesting() { return ++state.nesting; }
int DecrementNesting() {
  if (--state.nesting <= 0) {
    state.nesting = 0;
    ClearCache();
  }
  return state.nesting;
}
void ClearCache() { state.cache.clear(); }

ExcludeGuard::ExcludeGuard() : prev_(state.excluded) {
  ++state.excluded;
  Refresh();
}
ExcludeGuard::~ExcludeGuard() {
  state.excluded = prev_;
  Refresh();
}

std::optional<DType> Target(Policy p, const std::vector<const Tensor*>& tensors) {
  // The op runs on the device type of its first real tensor (as PyTorch's dispatch).
  const Tensor* first = nullptr;
  for (const Tensor* t : tensors)
    if (t->defined() && !t->is_wrapped_number() && t->device().type != DeviceType::kMeta) {
      first = t;
      break;
    }
  if (!first) return std::nullopt;
  const DeviceType dev = first->device().type;
  if (!IsEnabled(dev)) return std::nullopt;
  const DType low = GetDType(dev);
  bool any = false, any_f32 = false;
  for (const Tensor* t : tensors) {
    if (!Eligible(*t, dev)) continue;
    any = true;
    any_f32 |= t->dtype() == DType::kFloat32;
  }
  if (!any) return std::nullopt;
  switch (p) {
    case Policy::kLower:
      return low;
    case Policy::kFp32:
      return DType::kFloat32;
    case Policy::kPromote:
      return any_f32 ? DType::kFloat32 : low;
  }
  return std::nullopt;
}

Tensor Cast(const Tensor& t, DType to) {
  if (!Eligible(t, t.defined() ? t.device().type : DeviceType::kCPU) || t.dtype() == to) return t;
  const bool cacheable = state.cache_enabled && to != DType::kFloat32 &&
                         t.dtype() == DType::kFloat32 && t.requires_grad() && IsLeaf(t) &&
                         !t.impl()->view_base_;
  if (cacheable) {
    auto it = state.cache.find(t.impl());
    if (it != state.cache.end() && it->second.second.dtype() == to) return it->second.second;
  }
  Tensor c = functional::Cast(t, to);
  if (cacheable) state.cache[t.impl()] = {t, c};
  return c;
}

std::vector<Tensor> Cast(const std::vector<Tensor>& ts, DType to) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(autocast::Cast(t, to));
  return out;
}

std::optional<Tensor> Cast(const std::optional<Tensor>& t, DType to) {
  if (!t) return t;
  return autocast::Cast(*t, to);
}

}  // namespace oneflow::autocast
