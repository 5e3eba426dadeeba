// Note [Saved tensor hooks], the engine's half: a packed tensor is unpacked once per node
// application. The engine opens an UnpackScope around each node's Apply; what is unpacked
// inside it is reused by the node's other gradient branches and freed when the scope closes, so
// nothing stays unpacked between backward passes (retain_graph) and unpack hooks run once per
// saved tensor per pass, as PyTorch's.
#pragma once
#include <functional>

#include "core/tensor.h"

namespace oneflow {

class UnpackScope {
 public:
  UnpackScope();
  ~UnpackScope();
  UnpackScope(const UnpackScope&) = delete;
  UnpackScope& operator=(const UnpackScope&) = delete;

 private:
  void* prev_cache_;  // the enclosing scope's (allocated at its first unpack only)
  bool prev_open_;
};

// The value unpack() gives for `key`, computed once inside the innermost UnpackScope.
Tensor UnpackOnce(const void* key, const std::function<Tensor()>& unpack);

}  // namespace oneflow
