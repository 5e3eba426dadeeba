// The device of tensors made by factories (zeros, empty, rand, arange, ..., flow.tensor) when
// the call names none: cpu unless flow.set_default_device or `with flow.device(...)` set another
// (PyTorch's default device). Kernels that need host memory name the cpu device explicitly.
#pragma once
#include "core/device.h"

namespace oneflow {

inline Device& DefaultFactoryDeviceSlot() {
  static Device d;  // one per process (the inline function's static is shared across TUs)
  return d;
}
inline Device DefaultFactoryDevice() { return DefaultFactoryDeviceSlot(); }
inline void SetDefaultFactoryDevice(const Device& d) { DefaultFactoryDeviceSlot() = d; }

}  // namespace oneflow
