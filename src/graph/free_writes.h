// Note [Writes to free tensors]: what an in-place op in build() writes (docs/graph.md, "Captured
// tensors").
//
// A tensor build() reads that is neither a graph input nor made in build() is captured by
// reference (lazy.h). Two kinds, as in OneFlow:
//  - the graph's state -- the parameters and buffers of its modules, the tensors set as its
//    attributes, its optimizers' parameters: the program reads their current values on each
//    call, and an in-place op on one (a BatchNorm's running statistics, `num_batches_tracked`)
//    writes it, once per call;
//  - a *free* tensor (any other: a tensor of the caller's scope build() closes over): the program
//    reads it, but an in-place op on it -- directly (`x.mul_(2)`, `x[0] = 1`, `x.copy_(y)`) or
//    through a view of it (`x[0].add_(1)`) -- writes a copy made at the start of each call, and
//    every later use in build() reads that copy: the tensor itself is left as it was, and each
//    call starts again from its values (upstream OneFlow: "nn.Graph inplace will not change free
//    eager tensor", its test_graph_free_eager_tensor.py). So an eager call of an op followed by a
//    graph of the same op on the same tensor applies it once, not twice (upstream's autotest runs
//    each in-place method so: eager, then a graph capturing the same tensor).
// A leaf that requires grad is state too (a parameter, maybe of a module the graph does not hold);
// in a training graph so is any tensor requiring grad (its copy would cut its gradient; an
// inference graph runs without grad). A gradient's accumulation into a leaf (`accumulate_grad_`)
// writes its `.grad`, not the leaf.
// A graph input written in place is copied the same way (OneFlow's graph copies its inputs in: the
// caller's tensor is left as it was; upstream's test_graph_inplace_add.py), except, in a training
// graph, an input that requires grad (a leaf its gradient goes to). Python steps
// (autograd.Function, checkpointed blocks) see a free tensor itself (they hold it, not a slot).
#pragma once
#include <vector>

#include "graph/lazy.h"

namespace oneflow::lazy {

// Gives each free tensor and each graph input the traced program `p` writes (`state`: the
// graph's state) its per-call copy: nodes at the start of the program. A free tensor's copy,
// `clone`, is a new slot every reference to the tensor then reads (a writer that returned the
// tensor returns the copy); an input's, `input_copy_`, replaces the input in its own slot. `returned`: the captured
// tensors build() returned; the answer holds per returned tensor the slot of its copy (pinned, an
// output of the program) or -1 when it is not written. `training`: the graph has an optimizer.
std::vector<int> CopyFreeWrites(Program& p, const std::vector<Tensor>& state, const std::vector<Tensor>& returned,
                                bool training);

}  // namespace oneflow::lazy
