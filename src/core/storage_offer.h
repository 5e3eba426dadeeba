// Storage offers (Note [Storage offers]): nn.Graph's executor hands a kernel its output's bytes.
#pragma once
#include "core/tensor.h"

namespace oneflow {

// Note [Storage offers]: how nn.Graph's executor gives a kernel the bytes of its output in the
// step's arena (src/graph/memory_plan.h) without an out= form of every op. While an offer is open
// on a thread, the first CPU allocation there of exactly `nbytes` takes `data` -- a storage that
// keeps `owner` (the arena) alive -- instead of the allocator's. Settle() closes it: when a
// temporary took the bytes and still lives past the kernel (a cache), its bytes move to an
// allocation of their own, so the arena's bytes are never shared with a value the plan does not know.
struct StorageOffer {
  void* data = nullptr;
  size_t nbytes = 0;
  Storage* owner = nullptr;
  IntrusivePtr<Storage> taken;  // the storage made from it, once taken
  // Opens this offer on the calling thread (one at a time).
  void Open();
  // Closes it; true when `output` (the kernel's result) holds the offered bytes.
  bool Settle(const Storage* output);
};

}  // namespace oneflow
