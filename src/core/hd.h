// OF_HD marks the functions that device code calls as well as host code: the math functors of
// src/kernels (shared by the CPU engine and the CUDA pointwise engine, so that an op's math is
// written once) and the helpers they call, and the 16-bit float conversions. nvcc then compiles
// them for both sides (__host__ __device__); for a host compiler they expand to nothing, so the
// CPU build sees the same code as without them.
// Inside such a function `#ifdef __CUDA_ARCH__` selects device-only code (the device's own expf,
// tanhf, ... instead of the host's vectorisable forms).
#pragma once

#if defined(__CUDACC__)
#define OF_HD __host__ __device__
#else
#define OF_HD
#endif

// For the free helper functions of headers (`inline` keeps them ODR-safe as before).
#define OF_INLINE_HD inline OF_HD
