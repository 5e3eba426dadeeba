// Caching CPU allocator: freed blocks are kept in per-size-class free lists and reused, so a
// training loop's steady state does no malloc/free and no page faults on large buffers.
#pragma once
#include <cstddef>
#include <cstdint>

namespace oneflow {

void* CpuAlloc(size_t nbytes);       // 64-byte aligned; throws RuntimeError when out of memory
void CpuFree(void* p, size_t nbytes);  // nbytes must be what was asked for
void CpuEmptyCache();                  // hands cached blocks back to the system
size_t CpuCachedBytes();
uint64_t CpuAllocCalls();              // CpuAlloc calls so far (allocation counts, nn.Graph's arena)

}  // namespace oneflow
