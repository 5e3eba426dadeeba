// Anomaly detection (flow.autograd.detect_anomaly / set_detect_anomaly): while on, the engine
// checks every gradient a backward node returns and raises naming the node at the first NaN.
// Process-wide, as PyTorch's.
#pragma once

namespace oneflow {

struct AnomalyMode {
  static bool enabled();
  static bool check_nan();
  static void set(bool enabled, bool check_nan);
};

}  // namespace oneflow
