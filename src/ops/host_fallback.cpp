// Note [Host fallback] (ops/host_fallback.h): the retry's non-template half.
#include "ops/host_fallback.h"

#include <deque>

namespace oneflow::host_fallback {

struct HostCopies::State {
  struct Moved {
    Tensor orig, host;
    uint32_t version;
  };
  Device device;
  std::deque<Tensor> keep;
  std::deque<std::optional<Tensor>> opt;
  std::deque<std::vector<Tensor>> lists;
  std::vector<Moved> moved;

  Tensor Host(const Tensor& t) {
    if (!t.defined() || t.device().type != DeviceType::kCUDA) return t;
    device = t.device();
    Tensor h = kernels::HostCopy(t);
    moved.push_back({t, h, h.storage()->version()});
    return h;
  }
};

HostCopies::HostCopies() : s_(std::make_unique<State>()) {}
HostCopies::~HostCopies() = default;

Tensor& HostCopies::Keep(const Tensor& t) { return s_->keep.emplace_back(s_->Host(t)); }

const std::optional<Tensor>& HostCopies::Keep(const std::optional<Tensor>& t) {
  return s_->opt.emplace_back(t ? std::optional<Tensor>(s_->Host(*t)) : std::nullopt);
}

const std::vector<Tensor>& HostCopies::Keep(const std::vector<Tensor>& ts) {
  std::vector<Tensor>& v = s_->lists.emplace_back();
  for (const Tensor& t : ts) v.push_back(s_->Host(t));
  return v;
}

Device HostCopies::Host(const Device& d) {
  if (d.type != DeviceType::kCUDA) return d;
  s_->device = d;
  return Device{};
}

Device HostCopies::device() const {
  return s_->device.type == DeviceType::kCUDA ? s_->device : Device{DeviceType::kCUDA, 0};
}

void HostCopies::WriteBack(const Tensor* always) {
  for (const State::Moved& m : s_->moved) {
    if (m.host.storage()->version() == m.version && !(always && always->is_same(m.host))) continue;
    if (m.orig.is_same(m.host)) continue;
    kernels::CopyBackTo(m.orig, m.host);
    m.orig.BumpVersion();
  }
}

Tensor Back(const Tensor& t, const Device& d) { return kernels::DeviceCopy(t, d); }

std::vector<Tensor> Back(std::vector<Tensor> ts, const Device& d) {
  for (Tensor& t : ts) t = kernels::DeviceCopy(t, d);
  return ts;
}

}  // namespace oneflow::host_fallback
