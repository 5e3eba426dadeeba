// A traced Program saved and loaded (nn.Graph's runtime_state_dict, docs/graph.md "Saving a
// compiled graph").
//
// Note [Saved programs]: everything of a Program but tensor data goes into one byte string --
// nodes (their op by name), argument values, slot references, outputs, the per-slot meta
// (sizes, strides, dtype), forwarding and inputs. Tensors the program holds (captured parameters,
// buffers and constants, folded constants) are listed apart, each once however many nodes read
// it, so the caller decides per tensor: a parameter or buffer is found again by its name in the
// graph that loads the program (the loaded program then reads that graph's tensor, by reference,
// as a traced one would), anything else is saved with its values. Loading builds the Program
// without tracing: each node's call is found again by its op's name -- a table op's boxed entry,
// or a hand-written node registered by name (RegisterNodeFn) -- so the bytes hold no addresses.
// A fused pointwise node names its members by their index in the boxed registry; the bytes carry
// the registry's fingerprint (its size and names) and a build with another registry refuses them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "graph/lazy.h"

namespace oneflow::lazy {

struct SavedProgram {
  std::string bytes;                // the program without tensor data
  std::vector<Tensor> tensors;      // what its nodes capture and its folded constants, each once
  std::vector<std::string> names;   // per tensor: its parameter or buffer name, or ""
};

SavedProgram SaveProgram(const Program& p);

// Nodes of no table op (indexing, copies, detach, accumulate_grad_) by name: a loaded program
// finds their calls again by name. The bindings that record such nodes register them when the
// module is bound (accumulate_grad_: lazy.cpp).
void RegisterNodeFn(const std::string& name, NodeFn fn);
NodeFn FindNodeFn(const std::string& name);  // null when none
// Note [Local autograd nodes] (lazy.cpp): the node function of a wrapped op's backward (named
// `<op>_local_backward`, one function for every op).
NodeFn LocalBackwardFn();
// `tensors`: the saved list, each replaced by the tensor the loaded program is to read; `names`:
// the saved names (the program's text names those tensors).
std::shared_ptr<Program> LoadProgram(const std::string& bytes, const std::vector<Tensor>& tensors,
                                     const std::vector<std::string>& names);

}  // namespace oneflow::lazy
