// A memory plan for a traced Program (src/graph/lazy.h): the liveness of every intermediate
// value (a slot a node or a Python step computes) and an offset for it in one arena, so that two
// values alive at the same time never share bytes and values whose lifetimes do not meet reuse
// the same bytes. Views (a node whose output shares its input's storage: Node::aliases) take no
// bytes of their own and keep their base alive as long as they are. Graph inputs, captured
// tensors and folded constants are not in the arena.
//
// It is the plan the executor will allocate from (docs/graph.md "Memory plan"); the executor
// today still lets each kernel allocate its outputs, and frees each slot after its last use by
// the same liveness.
#pragma once
#include <cstdint>
#include <vector>

#include "graph/lazy.h"

namespace oneflow::lazy {

struct MemoryBlock {
  int slot;
  int64_t bytes;   // the value's contiguous size, rounded up to kArenaAlign
  int64_t offset;  // in the arena, a multiple of kArenaAlign
  int first;       // the node that computes it
  int last;        // the last node that reads it (or nodes.size() for a value kept to the end)
};

struct MemoryPlan {
  std::vector<MemoryBlock> blocks;
  int64_t arena_bytes = 0;  // the arena's size
  int64_t total_bytes = 0;  // the sum of the blocks (the arena's size without reuse)
};

constexpr int64_t kArenaAlign = 64;

MemoryPlan PlanMemory(const Program& p);

}  // namespace oneflow::lazy
