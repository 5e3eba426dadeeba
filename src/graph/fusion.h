// Fusion passes over a traced Program (src/graph/lazy.h), run by Optimize (passes.h) after
// common-subexpression elimination and before dead-code elimination (which then removes the
// nodes a fusion left unread, such as the `t(weight)` of a fused linear).
//
//  - producer fusion: a rule table keyed by (producer op, consumer op) -> a fused table op. A
//    consumer reading the only use of its producer's output is replaced by one node of the fused
//    op: `add(matmul(x, t(w)), b)` (nn.Linear's trace) -> `fused_matmul_bias(x, w, b)`, the bias
//    written into the GEMM's output and accumulated by it; with allow_fuse_add_to_output,
//    `add(fused_matmul_bias(x, w, b), r)` -> `fused_matmul_bias(x, w, b, _add_to_output=r)`. The
//    fused ops have backward formulas of their own (src/ops/table/fused.yaml), so these rules
//    also apply in training graphs.
//  - pointwise fusion (Note [Fused pointwise nodes]): a group of pointwise nodes whose inner
//    values are read only inside the group becomes one node evaluating the group per cache block
//    of its output, with the ops' own entries (the pointwise engine's functors): one pass over
//    memory instead of one per op. Forward only: a group is formed only of nodes whose outputs
//    need no gradient when the program runs (inference graphs, no_grad regions).
#pragma once
#include <vector>

#include "graph/lazy.h"

namespace oneflow::lazy {

struct FusionOptions {
  bool producers = true;      // the (producer, consumer) rule table
  bool add_to_output = true;  // its add-to-output rule (allow_fuse_add_to_output)
  bool pointwise = true;      // pointwise groups
  bool grad = false;          // the program runs with grad mode on (a training graph)
};

struct FusionStats {
  int producers = 0;  // nodes replaced by a fused table op
  int pointwise = 0;  // fused pointwise nodes made
  int absorbed = 0;   // nodes those absorbed
};

// Marks replaced nodes in `dead` (per node) and rewrites the surviving ones in place; `exposed`
// (per slot) are the values the program writes or the user holds (never fused away).
FusionStats Fuse(Program& p, std::vector<char>& dead, const std::vector<char>& exposed, const FusionOptions& o);

// The argument a fused node's kernel writes its result into when it is given a tensor there
// (the executor's arena, memory_plan.h), or -1 for other nodes.
int FusedOutputArg(const Node& n);
// The kernel of fused pointwise nodes (a saved program's node finds it again: serialize.h).
NodeFn FusedPointwiseFn();

// A fused pointwise node's members (Note [Fused pointwise nodes]): each one's op and first
// argument (begin has one more entry: the end), and per argument the member whose result it reads
// (-1: the argument is the node's own, a slot or a value).
struct FusedLayout {
  size_t nargs = 0;
  std::vector<size_t> begin;
  std::vector<const OpSchema*> op;
  std::vector<int> source;
};
FusedLayout ReadFusedLayout(const std::vector<Value>& args);

// The pointwise ops a group may hold (table ops computing each output element from the same
// element of their broadcast inputs).
const std::vector<const char*>& FusiblePointwiseOps();

}  // namespace oneflow::lazy
