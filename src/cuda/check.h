// CUDA API results as errors (docs/architecture.md §5): a failing runtime call raises a RuntimeError naming
// the call and CUDA's own message, never aborts.
#pragma once
#include <cuda_runtime.h>

#include "core/error.h"

#define OF_CUDA_CHECK(expr)                                                               \
  do {                                                                                    \
    cudaError_t of_err_ = (expr);                                                         \
    if (of_err_ != cudaSuccess) {                                                         \
      (void)cudaGetLastError(); /* clear the sticky-free error state */                   \
      OF_THROW(kRuntime) << "CUDA error: " << cudaGetErrorString(of_err_) << " (" #expr ")"; \
    }                                                                                     \
  } while (0)
