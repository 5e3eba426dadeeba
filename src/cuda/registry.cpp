// Note [Kernel registry] (kernels/registry.h): the CUDA kernels enter the registry here, once,
// before the first lookup for a CUDA device. Each .cu registers its own kernels in its
// Register*Kernels(); calling them by name keeps their objects in the link.
namespace oneflow::cuda {

void RegisterBlasKernels();
void RegisterCdistKernels();
void RegisterConvKernels();
void RegisterCtcKernels();
void RegisterEmbeddingBagKernels();
void RegisterEmbeddingKernels();
void RegisterFftKernels();
void RegisterFoldKernels();
void RegisterIndexNdKernels();
void RegisterIndexSlicesKernels();
void RegisterMarginLossKernels();
void RegisterNextafterKernels();
void RegisterNormalizationKernels();
void RegisterPadKernels();
void RegisterPoolKernels();
void RegisterRandomKernels();
void RegisterRowStatsKernels();
void RegisterScanKernels();
void RegisterSearchKernels();
void RegisterSoftmaxKernels();
void RegisterSortKernels();

void RegisterKernels() {
  RegisterBlasKernels();
  RegisterCdistKernels();
  RegisterConvKernels();
  RegisterCtcKernels();
  RegisterEmbeddingBagKernels();
  RegisterEmbeddingKernels();
  RegisterFftKernels();
  RegisterFoldKernels();
  RegisterIndexNdKernels();
  RegisterIndexSlicesKernels();
  RegisterMarginLossKernels();
  RegisterNextafterKernels();
  RegisterNormalizationKernels();
  RegisterPadKernels();
  RegisterPoolKernels();
  RegisterRandomKernels();
  RegisterRowStatsKernels();
  RegisterScanKernels();
  RegisterSearchKernels();
  RegisterSoftmaxKernels();
  RegisterSortKernels();
}

}  // namespace oneflow::cuda
