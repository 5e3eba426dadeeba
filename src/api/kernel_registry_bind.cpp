// flow._C._kernel_*: the kernel registry as the tests see it (Note [Kernel registry],
// kernels/registry.h): which devices and dtypes each kernel has, and the route a call takes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "kernels/registry.h"
#include "ops/copy.h"
#include "ops/host_fallback.h"

namespace nb = nanobind;

namespace oneflow {

namespace {

DeviceType DeviceTypeOf(const std::string& name) {
  if (name == "cpu") return DeviceType::kCPU;
  if (name == "cuda") return DeviceType::kCUDA;
  OF_CHECK_VALUE(name == "meta") << "_kernel_route: unknown device type '" << name << "'";
  return DeviceType::kMeta;
}

// A kernel interface of the tests' own, registered on first use: the CPU kernel fills its
// output with 0, the "CUDA" one (a host function here, so that a CPU-only build can run it on
// host tensors) with 1, for float32 only. CallKernel for a CUDA device then shows the registry's
// decision without a GPU: float32 takes the device kernel, any other dtype the host fallback
// (the CPU kernel, no exception raised and caught on the way), or NotImplementedError when
// ONEFLOW_CUDA_HOST_FALLBACK=0.
struct RegistryProbeKernel {
  static constexpr const char* kName = "registry_probe";
  using Fn = void (*)(const Tensor& out);
  using Writes = kernels::KernelWrites<0>;
};

void ProbeCpu(const Tensor& out) { FillWith(out, Scalar(0)); }
void ProbeDevice(const Tensor& out) { FillWith(out, Scalar(1)); }

void Probe(const Tensor& out) {
  static const bool registered = [] {
    kernels::RegisterKernel<RegistryProbeKernel>(DeviceType::kCPU, &ProbeCpu);
    kernels::RegisterKernel<RegistryProbeKernel>(DeviceType::kCUDA, &ProbeDevice, {DType::kFloat32});
    return true;
  }();
  (void)registered;
  OF_CHECK_VALUE(out.device().type == DeviceType::kCPU) << "_kernel_registry_probe: takes a CPU tensor";
  kernels::CallKernel<RegistryProbeKernel>(Device{DeviceType::kCUDA, 0}, out);
}

// The op-level half (Note [Host fallback]): OF_KERNEL_CALL of an entry that throws "no kernel for
// CUDA device 0" the first time it runs, as a host-only step reached with a CUDA tensor does, and
// returns its input the second time. The registry decides (RouteOfMissingKernel): where a CUDA
// backend is loaded the retry runs and its result moves to cuda:0; in a CPU-only build the error
// stands and nothing is retried.
Tensor FallbackProbe(const Tensor& x) {
  int calls = 0;
  auto entry = [&calls](const Tensor& t) -> Tensor {
    if (calls++ == 0) OF_THROW_NO_KERNEL(0) << "host_fallback_probe: a host-only step";
    return t;
  };
  return OF_KERNEL_CALL("host_fallback_probe", entry(OF_H(x)));
}

}  // namespace

void BindKernelRegistry(nb::module_& m) {
  m.def("_kernel_route", [](const std::string& name, const std::string& device,
                            nb::handle dtype) -> std::optional<std::string> {
    const auto r = kernels::KernelRoute(name, DeviceTypeOf(device), ToDType(dtype));
    if (!r) return std::nullopt;
    return std::string(kernels::RouteName(*r));
  }, nb::arg("name"), nb::arg("device"), nb::arg("dtype"),
     "the route kernels::CallKernel takes for the kernel `name` on a `device` ('cpu', 'cuda', 'meta') "
     "tensor of `dtype`: 'kernel', 'host_fallback' or 'no_kernel'; None for an unknown name");
  m.def("_kernel_registry", [] {
    nb::dict out;
    const char* devices[kernels::kNumDeviceTypes] = {"cpu", "cuda", "meta"};
    for (const auto& [name, sets] : kernels::RegisteredKernels()) {
      nb::dict per_device;
      for (int d = 0; d < kernels::kNumDeviceTypes; ++d) {
        nb::list dtypes;
        for (int t = 0; t < kNumDTypes; ++t)
          if (sets[d].Has(static_cast<DType>(t))) dtypes.append(DTypeObject(static_cast<DType>(t)));
        if (nb::len(dtypes) > 0) per_device[devices[d]] = dtypes;
      }
      out[nb::str(name.c_str())] = per_device;
    }
    return out;
  }, "every registered kernel: {name: {device type: [dtypes it covers]}}");
  m.def("_host_fallback_probe", [](nb::handle t) { return Wrap(FallbackProbe(ToTensor(t))); },
        "OF_KERNEL_CALL of an entry whose first call throws 'no kernel for CUDA device 0' (see the file)");
  m.def("_kernel_registry_probe", [](nb::handle t) { Probe(ToTensor(t)); },
        "CallKernel of the tests' probe kernel for a CUDA device on a CPU tensor (see the file)");
}
OF_BIND(100, BindKernelRegistry);

}  // namespace oneflow
