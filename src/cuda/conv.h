// cuDNN's switches (cuda/cudnn_conv.cpp; its convolutions are the CUDA kernels of kernels/conv.h,
// registered under the same kernel ids, Note [Kernel registry]).
#pragma once

namespace oneflow::cuda {

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
