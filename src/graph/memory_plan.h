// A memory plan for a traced Program (src/graph/lazy.h): the liveness of every intermediate
// value (a slot a node or a Python step computes) and an offset for it in one arena, so that two
// values alive at the same time never share bytes and values whose lifetimes do not meet reuse
// the same bytes. Views (a node whose output shares its input's storage: Node::aliases) take no
// bytes of their own and keep their base alive as long as they are. Graph inputs, captured
// tensors and folded constants are not in the arena.
//
// PlaceInArena gives a program whose nodes run without grad (an inference graph, or a training
// graph whose backward is nodes: Note [Backward nodes]) its arena: the values of single-output nodes
// (not views, not kept past the program: outputs and what Python steps read) planned alone, and
// each such node's (offset, bytes) for the executor, which offers those bytes to the node's kernel
// (Note [Storage offers], core/tensor.h) out of one allocation per step. Other values are
// allocated by their kernels and freed after their last use by the same liveness.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
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

// `only` (per slot, optional): plan just these values.
MemoryPlan PlanMemory(const Program& p, const std::vector<char>* only = nullptr);

// The arena of a program whose nodes run without grad: its size and, per node, where the output it computes
// goes in it (offset, bytes), or (-1, 0).
struct ArenaPlan {
  int64_t bytes = 0;
  std::vector<std::pair<int64_t, int64_t>> outputs;
};

// Plans p's arena (CPU programs) and records it in p (Program::arena) for its executions.
std::shared_ptr<const ArenaPlan> PlaceInArena(Program& p);
// The plan PlaceInArena recorded for p, or null.
std::shared_ptr<const ArenaPlan> ArenaPlanOf(const Program* p);
// Outputs written into an arena so far (the executor counts them).
void CountArenaPlacement(bool placed);
int64_t ArenaPlacements();

}  // namespace oneflow::lazy
