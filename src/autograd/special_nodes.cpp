#include "autograd/special_nodes.h"

#include "autograd/engine.h"
#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "ops/copy.h"
#include "decl/add.h"
#include "decl/clone.h"
#include "decl/empty.h"
#include "decl/sum.h"

namespace oneflow {

// ---- AccumulateGrad -----------------------------------------------------------------------

void AccumulateLeafGrad(const Tensor& leaf, Tensor g, bool owned) {
  AutogradMeta& m = MutableMeta(leaf);
  if (!m.grad_.defined()) {
    // Without create_graph the stored gradient is a plain tensor; reuse g's memory only when
    // nothing else can see it (not a view, no other owner, e.g. not the user's `gradient=`).
    if (GradMode::is_enabled()) {
      m.grad_ = g;
    } else if (owned && !g.impl()->view_base_ && !g.impl()->autograd_meta_ &&
               g.is_contiguous()) {
      m.grad_ = g;
    } else {
      m.grad_ = Clone(g);
    }
  } else if (GradMode::is_enabled()) {
    m.grad_ = functional::Add(m.grad_, g, Scalar(1));
  } else {
    Add_(m.grad_, g, Scalar(1));
  }
}

Node* AccumulateGrad::For(const Tensor& t) {
  AutogradMeta& m = MutableMeta(t);
  if (!m.grad_accumulator_) m.grad_accumulator_ = new AccumulateGrad(t);
  return m.grad_accumulator_;
}

AccumulateGrad::AccumulateGrad(const Tensor& leaf) : variable_(leaf) { AddOutput(leaf); }

AccumulateGrad::~AccumulateGrad() {
  AutogradMeta* m = GetMeta(variable_);
  if (m && m->grad_accumulator_ == this) m->grad_accumulator_ = nullptr;
}

std::vector<Tensor> AccumulateGrad::Apply(std::vector<Tensor>& grads) {
  Tensor g = std::move(grads[0]);
  AutogradMeta& m = MutableMeta(variable_);
  if (LazyBackward* lazy = CurrentLazyBackward()) [[unlikely]] {
    // Note [Backward nodes]: a node of the traced program writes .grad when it runs. Hooks on
    // the leaf would see lazy tensors: such a backward stays a Python step of the program.
    OF_CHECK(m.leaf_hooks_.empty()) << "nn.Graph: a leaf with gradient hooks keeps backward a Python step";
    if (g.defined()) lazy->Accumulate(variable_, g);
    return {};
  }
  // Note [Post-accumulate hooks]: leaf hooks with a negative id are
  // register_post_accumulate_grad_hook's; they run after the accumulation, on the leaf itself.
  for (auto& [id, hook] : m.leaf_hooks_) {
    if (!g.defined()) break;
    if (id < 0) continue;
    Tensor r = hook(g);
    if (r.defined()) g = r;
  }
  if (!g.defined()) return {};
  const bool owned = g.impl()->RefCount() == 1;
  AccumulateLeafGrad(variable_, std::move(g), owned);
  for (size_t i = 0; i < m.leaf_hooks_.size(); ++i) {  // (by index: a hook may register hooks)
    if (m.leaf_hooks_[i].first >= 0) continue;
    GradHook hook = m.leaf_hooks_[i].second;
    hook(variable_);
  }
  return {};
}

// ---- views --------------------------------------------------------------------------------

Tensor ZerosWithGeometry(const Geometry& g, DType dtype, Device device) {
  int64_t extent = 1;
  for (size_t d = 0; d < g.sizes.size(); ++d) {
    if (g.sizes[d] == 0) { extent = 0; break; }
    extent += (g.sizes[d] - 1) * g.strides[d];
  }
  Tensor flat = Empty(DimVector{extent}, dtype, device);
  FillWith(flat, Scalar(0));
  Tensor t = MakeView(flat, g.sizes, g.strides, 0);
  t.impl()->view_base_.Reset();  // the flat buffer is private: t owns the memory
  return t;
}

Tensor RegionOf(const Tensor& buf, const Geometry& base, const Geometry& view) {
  return MakeView(buf, view.sizes, view.strides, buf.offset() + view.offset - base.offset);
}

std::vector<Tensor> AsStridedBackward::Apply(std::vector<Tensor>& grads) {
  Tensor g = grads[0];
  if (!g.defined()) return {Tensor()};
  // Expanded dims (stride 0) of the view map many gradient elements onto one base element.
  Geometry view = view_;
  DimVector expanded;
  for (size_t d = 0; d < view.sizes.size(); ++d)
    if (view.strides[d] == 0 && view.sizes[d] > 1) {
      expanded.push_back(d);
      view.sizes[d] = 1;
    }
  if (!expanded.empty()) g = functional::Sum(g, expanded, true, std::nullopt);
  Tensor buf = ZerosWithGeometry(base_, g.dtype(), g.device());
  functional::CopyFrom_(RegionOf(buf, base_, view), g);
  return {buf};
}

std::vector<Tensor> CopySlices::Apply(std::vector<Tensor>& grads) {
  const Tensor& g = grads[0];
  if (!g.defined()) return {Tensor(), Tensor()};
  Tensor buf = ZerosWithGeometry(base_, g.dtype(), g.device());
  functional::CopyFrom_(buf, g);
  Tensor region = RegionOf(buf, base_, view_);
  std::vector<Tensor> out(2);
  if (needs(1)) out[1] = functional::Clone(region);
  if (needs(0)) {
    functional::CopyFrom_(region, WrappedNumber(Scalar(0)));  // the view's part went to node
    out[0] = buf;
  }
  return out;
}

}  // namespace oneflow
