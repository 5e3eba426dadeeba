#include "autograd/anomaly_mode.h"

#include <atomic>

namespace oneflow {

namespace {
std::atomic<bool> g_enabled{false}, g_check_nan{true};
}  // namespace

bool AnomalyMode::enabled() { return g_enabled.load(std::memory_order_relaxed); }
bool AnomalyMode::check_nan() { return g_check_nan.load(std::memory_order_relaxed); }
void AnomalyMode::set(bool enabled, bool check_nan) {
  g_enabled = enabled;
  g_check_nan = check_nan;
}

}  // namespace oneflow
