// The layout= argument of the factories (PyTorch's `torch.zeros(2, layout=torch.strided)`).
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "core/error.h"

namespace oneflow {

// Note [layout= of factories]
// Every tensor here is strided (dense): `flow.strided` (python/oneflow/_types.py) is the one
// layout object, so a factory accepts layout=None or it and refuses anything else with PyTorch's
// TypeError. The generated bindings of the factories (tools/gen_ops.py, takes_placement) call
// this; only their files include this header, so that a change here rebuilds those alone.
inline void CheckLayout(nanobind::handle layout) {
  if (layout.is_none()) return;
  nanobind::handle type = layout.type();
  std::string mod = nanobind::cast<std::string>(type.attr("__module__"));
  std::string name = nanobind::cast<std::string>(type.attr("__name__"));
  OF_CHECK_TYPE(name == "layout" && mod.rfind("oneflow", 0) == 0)
      << "argument 'layout' must be oneflow.layout, not " << name;
  OF_CHECK_KIND(nanobind::cast<std::string>(layout.attr("name")) == "strided", ErrorKind::kNotImplemented)
      << "only the strided layout is supported, got " << nanobind::cast<std::string>(nanobind::str(layout));
}

}  // namespace oneflow
