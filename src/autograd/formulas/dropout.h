// Backward helpers of the dropout family (src/ops/table/dropout.yaml).
#pragma once

namespace oneflow::functional {

// native_dropout's gradient scale: 1 / (1 - p) for kept elements while training (0 when p = 1),
// 1 in eval mode (the output was a copy).
inline double DropoutScale(double p, bool train) {
  if (!train) return 1.0;
  return p < 1 ? 1.0 / (1.0 - p) : 0.0;
}

}  // namespace oneflow::functional
