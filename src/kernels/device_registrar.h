// Note [Kernel registry] (kernels/registry.h): how a device's kernels enter the registry without
// the registry naming the device's code. A device backend (src/cuda) defines one DeviceKernels
// object, in a file that is linked whenever the backend is built, naming the function that
// registers all its kernels; EnsureDeviceKernelsRegistered runs it once, before the first lookup
// for that device. A build without the backend has no such object, and every lookup for the
// device answers "no kernel".
#pragma once
#include "core/device.h"

namespace oneflow::kernels {

struct DeviceKernels {
  // Registration only stores pointers: `register_all` touches no device.
  DeviceKernels(DeviceType device, void (*register_all)());
};

}  // namespace oneflow::kernels
