// The backward engine: runs the graph below some roots in dependency order (docs/architecture.md §4 autograd).
#pragma once
#include <vector>

#include "core/tensor.h"

namespace oneflow {

struct BackwardOptions {
  bool keep_graph = false;    // retain_graph
  bool create_graph = false;  // record the backward itself (higher-order gradients)
  bool allow_unused = false;
};

// backward(): gradients of `roots` (seeded with `root_grads`, undefined = ones for a scalar)
// accumulate into the leaves' .grad. With `inputs` (autograd.grad), the gradients reaching
// `inputs` are returned instead and nothing is accumulated.
std::vector<Tensor> RunBackward(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads,
                                const std::vector<Tensor>& inputs, const BackwardOptions& opt);

struct Edge;
// The same from gradient edges (autograd.graph.GradientEdge): the backward starts at the nodes of
// `root_edges` with `seeds` (defined, shaped as those outputs) and returns the gradients reaching
// the `inputs` edges (an edge of a node's output number: what flows into that output's
// gradient; a leaf's edge is its AccumulateGrad node).
std::vector<Tensor> RunBackwardEdges(const std::vector<Edge>& root_edges, const std::vector<Tensor>& seeds,
                                     const std::vector<Edge>& inputs, const BackwardOptions& opt);

// Note [Backward nodes] (src/graph/lazy.h): while a graph traces a backward pass on lazy
// tensors, the engine sums and casts gradients through functional entries (which record them)
// and each leaf's AccumulateGrad hands its gradient here instead of writing .grad.
struct LazyBackward {
  virtual void Accumulate(const Tensor& leaf, const Tensor& grad) = 0;

 protected:
  ~LazyBackward() = default;
};
LazyBackward*& CurrentLazyBackward();  // this thread's; null outside a traced backward

}  // namespace oneflow
