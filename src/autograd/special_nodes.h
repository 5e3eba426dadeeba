// Nodes that are not the backward of a table op: gradient accumulation into leaves, and the two
// nodes behind in-place writes through views (Note [Views and in-place] in meta.cpp).
#pragma once
#include "autograd/node.h"

namespace oneflow {

// Sizes, strides and storage offset of a tensor: enough to address a view inside its base.
struct Geometry {
  DimVector sizes, strides;
  int64_t offset;
  explicit Geometry(const Tensor& t) : sizes(t.sizes()), strides(t.strides()), offset(t.offset()) {}
};

// Adds g into leaf's .grad as AccumulateGrad does (hooks aside). `owned`: nothing else holds g,
// so it may become .grad itself.
void AccumulateLeafGrad(const Tensor& leaf, Tensor g, bool owned);

class AccumulateGrad final : public Node {
 public:
  // The accumulator of leaf t (one per leaf while any graph uses it).
  static Node* For(const Tensor& t);
  explicit AccumulateGrad(const Tensor& leaf);
  ~AccumulateGrad() override;
  const char* name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// Backward of an arbitrary view of `base`: scatters the gradient into zeros shaped like base.
class AsStridedBackward final : public Node {
 public:
  AsStridedBackward(const Tensor& base, const Tensor& view) : base_(base), view_(view) {}
  const char* name() const override { return "AsStridedBackward0"; }
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override;

 private:
  Geometry base_, view_;
};

// History of a base after an in-place op wrote into one of its views. Inputs: the base's old
// history and the in-place op's node (whose output 0 is the view's new value).
class CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view) : base_(base), view_(view) {}
  const char* name() const override { return "CopySlices"; }
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override;

 private:
  Geometry base_, view_;
};

// A fresh zero tensor laid out like `g` (same sizes and strides), owning its memory.
Tensor ZerosWithGeometry(const Geometry& g, DType dtype, Device device);
// The view of `buf` (laid out like base) that corresponds to `view` inside base.
Tensor RegionOf(const Tensor& buf, const Geometry& base, const Geometry& view);

}  // namespace oneflow
