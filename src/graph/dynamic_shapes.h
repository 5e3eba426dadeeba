// Note [Dynamic shapes]: ops whose output's size depends on their inputs' values (nonzero,
// masked_select, unique, bincount, ...) in a traced Program (src/graph/lazy.h).
//
// Meta inference cannot size such an output (a meta tensor has no values), so the tracer records
// a *dynamic node*: the op runs once at trace time on the tracing call's values of its inputs
// (Tracer::Evaluate: the graph's real inputs, captured tensors, and the pure nodes between them
// run again; a random draw, an in-place write or a Python step in between is refused with the op
// named), its outputs' lazy tensors get those sizes, and the dims this table names are marked
// dynamic (Program::dynamic; the program prints them `?`). Code in build() after it sees the
// tracing call's sizes, as OneFlow's lazy tensors show a dynamic blob's shape at compile time.
//
// A node reading a dynamic value has dynamic outputs too (its meta inference ran on the tracing
// call's sizes): the dims whose size equals one of its inputs' dynamic sizes; when none does, none
// if the output has the sizes of one of its static inputs (masked_select's gradient scattered
// into the input's shape), else every dim (a 0-dim output is always static). Sizes a formula
// took from a dynamic value -- an int-list argument equal to its sizes (`expand(grad,
// input_sizes)`), mean's count -- are read from that value when the node runs (Node::size_refs,
// Tracer::LinkSizes). Otherwise every kernel sizes its own output from the real values, as in
// eager, and the passes treat dynamic values as values of unknown size: the arena plans none of
// them (their kernels allocate), no fusion or size-based simplification rule takes them. Their
// backward nodes are
// those of the op table's formulas, as for any op (masked_select's gradient is a masked_scatter
// of the dynamic gradient into the input's shape).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "ops/boxed.h"

namespace oneflow::lazy {

// The dims of each output of table op `op` called with `args` (one Value per parameter, defaults
// filled) that the values decide, as bit masks; empty when this call's outputs are sized by
// meta inference (a static call: `one_hot` with num_classes given, `repeat_interleave` with an
// int repeats or an output_size).
std::vector<uint64_t> DynamicDims(std::string_view op, const std::vector<Value>& args,
                                  const std::vector<Tensor>& outs);

// Whether `op` called with `args` is value-dependent (DynamicDims' rule applies to it).
bool IsValueDependent(std::string_view op, const std::vector<Value>& args);

// The dynamic dims of an output `out` of a node reading dynamic inputs of dynamic sizes `sizes`
// (the tracing call's sizes of their dynamic dims) and static tensors of sizes `fixed`.
uint64_t InheritedDims(const Tensor& out, const std::vector<int64_t>& sizes, const std::vector<DimVector>& fixed);

}  // namespace oneflow::lazy
