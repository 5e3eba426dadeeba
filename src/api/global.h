// Global tensors as a kind the bindings know (docs/global_tensors.md, "How an op runs").
//
// Note [Global kind]: a global tensor is an instance of one of the Python types registered here
// (oneflow._global.GlobalTensor and GlobalParameter), holding no C++ tensor of its own but its
// local component, placement, nd-SBP and logical shape in fixed slots. IsGlobal is the one test
// of the kind: a type comparison, no attribute lookup.
//
// Note [Global fast path]: the common case of a global op -- an op whose SBP rule is elementwise
// (the table's `pointwise` family: pointwise, pointwise_sum, pointwise_scale) on global inputs
// that all share one placement, one SBP without partial sums and one logical shape -- needs no
// signature search and no boxing: the op runs on the local components as they are and its output
// has the inputs' layout. GlobalFast does that in C++ (the component read from the slot, the op's
// binding called, the output wrapped into a GlobalTensor by filling its slots), and answers
// nullopt for every other call, which then goes to the Python dispatcher
// (python/oneflow/_global/dispatch.py) exactly as before. Nothing here decides a layout the
// dispatcher would decide otherwise: it is the dispatcher's own same-layout path, moved down.
// Ops of the rules of Note [SBP rules in C++] (api/global_rules.h: matmul / bmm, linear, sum / mean,
// softmax, transpose) run here too when their signature, the one the dispatcher would take -- on a
// mesh one per axis --, needs no boxing and no gradient sum of a broadcast input (global_bind.cpp's
// RuleFast); the output gets the rule's SBP and logical shape. So do add / sub / neg of partial sums
// of one layout and mul / div of a partial sum by broadcast factors (Note [Partial elementwise]:
// PartialFast), where the dispatcher keeps the partial sum too.
#pragma once
#include <nanobind/nanobind.h>

#include <initializer_list>
#include <optional>

namespace nb = nanobind;

namespace oneflow {

// Whether h is a global tensor (Note [Global kind]); false before oneflow._global registered
// its types.
bool IsGlobal(nb::handle h);

// A table op's binding met a global argument (Note [Global arguments] in convert.h): the op run
// by Note [Global fast path], or nullopt (the Python dispatcher's turn). `names` / `values` as
// GlobalCall's; for GlobalCallVar's form, `args` / `kwargs`.
std::optional<nb::object> GlobalFast(const char* op, bool inplace, std::initializer_list<const char*> names,
                                     std::initializer_list<nb::handle> values);
std::optional<nb::object> GlobalFastVar(const char* op, bool inplace, nb::handle args, nb::handle kwargs);

}  // namespace oneflow
