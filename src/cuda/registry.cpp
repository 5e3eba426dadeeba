// Note [Kernel registry] (kernels/registry.h): the CUDA kernels enter the registry here, once,
// before the first lookup for a CUDA device. Each .cu registers its own kernels in its
// Register*Kernels(); calling them by name keeps their objects in the link.
namespace oneflow::cuda {

// Note [Device runtime] (core/device_runtime.h): the runtime's table is needed from the first
// allocation, before any kernel lookup, so it registers at load, from this object (which
// cuda_bind.cpp's reference to RegisterKernels keeps in the link).
void RegisterDeviceRuntime();  // device_runtime.cpp
namespace {
const bool kDeviceRuntimeRegistered = (RegisterDeviceRuntime(), true);
}  // namespace

void RegisterAdvIndexKernels();
void RegisterBlasKernels();
void RegisterCdistKernels();
void RegisterConvKernels();
void RegisterCtcKernels();
void RegisterDropoutKernels();
void RegisterEmbeddingBagKernels();
void RegisterEmbeddingKernels();
void RegisterFftKernels();
void RegisterFoldKernels();
void RegisterGatherScatterKernels();
void RegisterIndexNdKernels();
void RegisterIndexSlicesKernels();
void RegisterLinalgKernels();
void RegisterMarginLossKernels();
void RegisterNextafterKernels();
void RegisterNllKernels();
void RegisterNllScalesKernels();
void RegisterNormalizationKernels();
void RegisterPadKernels();
void RegisterPoolKernels();
void RegisterRandomKernels();
void RegisterResampleKernels();
void RegisterRowStatsKernels();
void RegisterScanKernels();
void RegisterSearchKernels();
void RegisterSoftmaxKernels();
void RegisterSortKernels();
void RegisterWhereKernels();

void RegisterKernels() {
  RegisterAdvIndexKernels();
  RegisterBlasKernels();
  RegisterCdistKernels();
  RegisterConvKernels();
  RegisterCtcKernels();
  RegisterDropoutKernels();
  RegisterEmbeddingBagKernels();
  RegisterEmbeddingKernels();
  RegisterFftKernels();
  RegisterFoldKernels();
  RegisterGatherScatterKernels();
  RegisterIndexNdKernels();
  RegisterIndexSlicesKernels();
  RegisterLinalgKernels();
  RegisterMarginLossKernels();
  RegisterNextafterKernels();
  RegisterNllKernels();
  RegisterNllScalesKernels();
  RegisterNormalizationKernels();
  RegisterPadKernels();
  RegisterPoolKernels();
  RegisterRandomKernels();
  RegisterResampleKernels();
  RegisterRowStatsKernels();
  RegisterScanKernels();
  RegisterSearchKernels();
  RegisterSoftmaxKernels();
  RegisterSortKernels();
  RegisterWhereKernels();
}

}  // namespace oneflow::cuda
