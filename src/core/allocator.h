// Caching CPU allocator: freed blocks are kept in per-size-class free lists and reused, so a
// training loop's steady state does no malloc/free and no page faults on large buffers; free large
// blocks give their pages back when the resident set would outgrow the most bytes ever live
// (Note [Resident cap] in allocator.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace oneflow {

void* CpuAlloc(size_t nbytes);       // 64-byte aligned; throws RuntimeError when out of memory
void CpuFree(void* p, size_t nbytes);  // nbytes must be what was asked for
void CpuEmptyCache();                  // hands cached blocks back to the system
size_t CpuCachedBytes();
uint64_t CpuAllocCalls();              // CpuAlloc calls so far (allocation counts, nn.Graph's arena)

// The large blocks' accounting of Note [Resident cap] (src/core/allocator.cpp), in bytes.
struct CpuAllocStats {
  size_t cached = 0;           // free blocks held, all sizes (CpuCachedBytes)
  size_t live_large = 0;       // large blocks in use, as asked for
  size_t peak_live_large = 0;  // the most of live_large so far
  size_t free_resident = 0;    // free large blocks' bytes still resident
  size_t given_back = 0;       // bytes given back to the system so far (a counter)
};
CpuAllocStats CpuAllocatorStats();

}  // namespace oneflow
