// Convolutions of CUDA tensors on cuDNN (the CUDA side of kernels/conv.h, same contracts: all
// tensors contiguous with x's dtype, outputs written completely). Builds without cuDNN raise
// NotImplementedError.
#pragma once
#include "core/tensor.h"
#include "kernels/conv.h"

namespace oneflow::cuda {

void ConvForward(const ConvGeom& g, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y);
void ConvBackwardData(const ConvGeom& g, const Tensor& dy, const Tensor& w, const Tensor& dx);
void ConvBackwardWeight(const ConvGeom& g, const Tensor& x, const Tensor& dy, const Tensor& dw);
// flow.backends.cudnn.allow_tf32 (PyTorch's default: True) for float32 convolutions.
void SetCudnnAllowTF32(bool allow);
bool CudnnAllowTF32();
int CudnnVersion();  // cudnnGetVersion(), -1 without cuDNN
// flow.backends.cudnn.benchmark / .deterministic (Note [cuDNN algorithm choice]).
void SetCudnnBenchmark(bool on);
bool CudnnBenchmark();
void SetCudnnDeterministic(bool on);
bool CudnnDeterministic();

}  // namespace oneflow::cuda
