// Argument-kind tests for overloaded flow._C functions (Note [OneFlow's signatures]).
//
// Note [OneFlow's signatures]: flow._C is OneFlow's functional API, and some of its functions
// take other arguments than our PyTorch-style op of the same name (`_C.gather(x, indices, axis)`
// is an index_select with a multi-dimensional index, ours is torch.gather(input, dim, index)).
// The op table declares upstream's forms (`oneflow:` in src/ops/table/README.md); the generator
// binds each as a further nanobind overload of the name. Our bindings take every argument as a
// plain handle, so nanobind's overload resolution sees only arity and keyword names; each
// overload of such a name therefore first checks the kinds of its arguments with these tests and
// throws nb::next_overload when they do not fit, and nanobind tries the next form. The tests are
// no looser than the conversions that follow (so a fitting call converts) and strict only where
// the forms differ: a tensor never fits an `int` (a one-element integer tensor does, as ToInt
// accepts it), a number never fits a `Tensor`.
#pragma once
#include "api/convert.h"

namespace oneflow {

// A local or a global tensor (a global one goes on to the Python dispatcher, Note [Global arguments]).
bool FitsTensor(nb::handle h);
bool FitsInt(nb::handle h);
bool FitsNumber(nb::handle h);  // float, Scalar
bool FitsBool(nb::handle h);
bool FitsIntList(nb::handle h);  // an int or a sequence of ints
bool FitsTensorList(nb::handle h);
bool FitsStr(nb::handle h);
inline bool FitsNoneOr(nb::handle h, bool (*fits)(nb::handle)) { return h.is_none() || fits(h); }

}  // namespace oneflow
