// The precompiled header of the Python module (CMakeLists.txt, docs/build.md "Precompiled
// headers"): the core's, nanobind and the binding helpers every bind_<family>.cpp includes
// (~1 s of parsing per file). Files keep their own includes: this is an optimisation only.
#pragma once
#include "core/pch.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "api/arg_fits.h"
#include "api/convert.h"
#include "autograd/functional.h"
#include "graph/lazy.h"
