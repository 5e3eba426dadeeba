// Passes over a traced Program (src/graph/lazy.h), run once when tracing ends, before the
// program's slot lifetimes are computed. Each is switchable (nn.Graph's config, docs/graph.md)
// and none changes a number: a pass only removes work whose result is already known.
//
//  - algebraic simplification: a table of rules keyed by op (transpose/t/permute pairs, reshape
//    and view chains, a cast to the input's dtype or through a wider one and back, ops that return
//    their input); a node replaced by its input's slot leaves a forwarding entry;
//  - constant folding: a pure node whose tensor inputs are all constants (results of folded nodes;
//    a creation op has none) is computed once; its outputs become program constants;
//  - common-subexpression elimination: a pure node equal to an earlier one (same op, same
//    arguments, same grad mode) reuses the earlier one's outputs;
//  - fusion (src/graph/fusion.h): matmul + bias (+ a residual add) into fused_matmul_bias, groups
//    of pointwise nodes into one node running the group per cache block; unlike the passes above it
//    changes how values are computed (a bias summed inside the GEMM rounds as PyTorch's addmm);
//  - dead-code elimination: a pure node none of whose outputs is used is removed;
//  - dropped gradient writes (Note [Dropped gradient writes], passes.cpp): a parameter's
//    accumulate_grad_ when the optimizer's update is a node of the program.
//
// "Pure" (Note [Pure nodes]): not a Python step, writes none of its arguments (in-place forms,
// `setitem`, `copy_`), draws no random numbers (a Generator parameter), returns no captured
// tensor. Values the program or its user may write (arguments of in-place nodes and Python
// steps, the graph's outputs, and through views their bases) are never shared or folded, and a
// node reading a captured tensor that the program writes is never merged.
#pragma once
#include <string>

#include "graph/lazy.h"

namespace oneflow::lazy {

struct PassOptions {
  bool simplify = true;
  bool fold = true;
  bool cse = true;
  bool dce = true;
  bool fuse = true;           // matmul + bias into fused_matmul_bias (fusion.h's rule table)
  bool add_to_output = true;  // ... and a residual add into it (allow_fuse_add_to_output)
  bool fuse_pointwise = true; // groups of pointwise nodes
  bool grad = false;          // the program runs with grad mode on (a training graph)
  bool drop_grad_writes = true;  // Note [Dropped gradient writes]
};

struct PassStats {
  int simplified = 0;  // nodes rewritten or removed by a rule
  int folded = 0;      // nodes computed at compile time
  int merged = 0;      // nodes reusing an equal earlier node
  int removed = 0;     // dead nodes removed
  int fused = 0;       // nodes replaced by a fused table op (producer fusion)
  int pointwise = 0;   // fused pointwise nodes made
  int absorbed = 0;    // pointwise nodes those replace
  int dropped = 0;     // accumulate_grad_ nodes removed (Note [Dropped gradient writes])
};

// Note [Pure nodes], for the fusion passes.
bool IsPureNode(const Node& n);
bool WritesArguments(const Node& n);

// Runs the enabled passes (simplify, fold, cse, fusion, dropped gradient writes, dce, in that order) and finalizes the program.
PassStats Optimize(Program& p, const PassOptions& options);

}  // namespace oneflow::lazy
