// The converters of the op table's `no_single_int:` and `same_form:` parameters (src/ops/table/README.md): an int
// list that takes a sequence only. Apart from convert.h (in the precompiled header) because only
// the generated bindings of a few families call it.
#pragma once
#include <nanobind/nanobind.h>

#include "core/shape.h"

namespace oneflow {
namespace nb = nanobind;

// A sequence of ints (as ToIntList); one int or a one-element tensor is PyTorch's TypeError
// "argument 'stride' (position 2) must be tuple of ints, not int".
DimVector ToIntListStrict(nb::handle h);

// The op table's `same_form:` pair (src/ops/table/README.md): one int beside a sequence is
// PyTorch's TypeError (movedim has an (int, int) and an (int[], int[]) overload, no mixed one).
void CheckSameIntForm(const char* a, nb::handle ha, const char* b, nb::handle hb);

}  // namespace oneflow
