// Differentiable entries of the ops the generator can't express (`backward: manual` in the op table,
// and the indexing/copy primitives behind Tensor.__getitem__/__setitem__/copy_).
#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/error.h"
#include "graph/lazy.h"
#include "decl/cat.h"
#include "decl/index_put.h"
#include "decl/stack.h"
#include "decl/unbind.h"
#include "decl/zeros.h"

namespace oneflow::functional {

namespace {

bool Recording(const Tensor& t) { return GradMode::is_enabled() && RequiresGrad(t); }

// Node for a one-input op whose formula only needs saved metadata and the gradients.
template <typename F>
struct SimpleNode final : Node {
  SimpleNode(const char* n, F f) : name_(n), f_(std::move(f)) {}
  const char* name() const override { return name_; }
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override { return {f_(grads)}; }
  const char* name_;
  F f_;
};

template <typename F>
IntrusivePtr<Node> MakeNode(const char* name, const Tensor& input, F f) {
  IntrusivePtr<Node> n(new SimpleNode<F>(name, std::move(f)));
  n->next_.push_back(GradEdge(input));
  return n;
}

std::vector<Tensor> RecordSplit(const Tensor& input, std::vector<Tensor> outs, int64_t dim) {
  const int64_t d = WrapDim(dim, input.dim());
  IntrusivePtr<Node> node = MakeNode("SplitBackward0", input, [d](std::vector<Tensor>& g) { return functional::Cat(g, d); });
  for (const Tensor& o : outs) SetHistory(o, node.get());
  return outs;
}

// A node saving the input and the result (max()/min() over everything).
struct ExtremeAllBackward final : Node {
  const char* name() const override { return "MaxBackward1"; }
  SavedVariable input_, result_;
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override {
    return {ExtremeGrad(grads[0], input_.Unpack(this), result_.Unpack(this), std::nullopt, false)};
  }
  void ReleaseSaved() override { input_.Reset(); result_.Reset(); }
};

template <bool kMax>
Tensor ExtremeAll(const Tensor& input) {
  Tensor r = kMax ? ::oneflow::MaxAll(input) : ::oneflow::MinAll(input);
  if (!Recording(input) || !IsDifferentiableType(r.dtype())) return r;
  IntrusivePtr<ExtremeAllBackward> node(new ExtremeAllBackward());
  node->next_.push_back(GradEdge(input));
  node->input_ = SavedVariable(input, false);
  SetHistory(r, node.get());
  node->result_ = SavedVariable(r, true);
  return r;
}

struct IndexSaving final : Node {
  IndexSaving(const char* n) : name_(n) {}
  const char* name() const override { return name_; }
  const char* name_;
  SavedVariable indices_;
  DimVector sizes_;
  int64_t dim_;
  bool keepdim_;
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override {
    return {IndexReduceGrad(grads[0], indices_.Unpack(this), sizes_, dim_, keepdim_)};
  }
  void ReleaseSaved() override { indices_.Reset(); }
};

template <bool kMax>
std::tuple<Tensor, Tensor> ExtremeDim(const Tensor& input, int64_t dim, bool keepdim) {
  auto r = kMax ? ::oneflow::MaxDim(input, dim, keepdim) : ::oneflow::MinDim(input, dim, keepdim);
  if (!Recording(input)) return r;
  IntrusivePtr<IndexSaving> node(new IndexSaving(kMax ? "MaxBackward0" : "MinBackward0"));
  node->next_.push_back(GradEdge(input));
  node->indices_ = SavedVariable(std::get<1>(r), false);
  node->sizes_ = input.sizes();
  node->dim_ = dim;
  node->keepdim_ = keepdim;
  SetHistory(std::get<0>(r), node.get());
  return r;
}

// Gradient of a view made by `make_view(buf)`: zeros shaped like the input, grad in the view.
template <typename V>
Tensor ViewGrad(const Tensor& grad, const DimVector& sizes, V make_view) {
  Tensor buf = ::oneflow::Zeros(sizes, grad.dtype(), grad.device(), false);
  CopyFrom_(make_view(buf), grad);
  return buf;
}

}  // namespace

std::vector<Tensor> SplitWithSizes(const Tensor& input, const std::vector<int64_t>& sizes, int64_t dim) {
  auto outs = ::oneflow::SplitWithSizes(input, sizes, dim);
  return Recording(input) ? RecordSplit(input, std::move(outs), dim) : outs;
}

std::vector<Tensor> SplitBySize(const Tensor& input, int64_t split_size, int64_t dim) {
  auto outs = ::oneflow::SplitBySize(input, split_size, dim);
  return Recording(input) ? RecordSplit(input, std::move(outs), dim) : outs;
}

std::vector<Tensor> Unbind(const Tensor& input, int64_t dim) {
  auto outs = ::oneflow::Unbind(input, dim);
  if (!Recording(input) || outs.empty()) return outs;
  const int64_t d = WrapDim(dim, input.dim());
  IntrusivePtr<Node> node = MakeNode("UnbindBackward0", input, [d](std::vector<Tensor>& g) { return functional::Stack(g, d); });
  for (const Tensor& o : outs) SetHistory(o, node.get());
  return outs;
}

Tensor MaxAll(const Tensor& input) { return ExtremeAll<true>(input); }
Tensor MinAll(const Tensor& input) { return ExtremeAll<false>(input); }
std::tuple<Tensor, Tensor> MaxDim(const Tensor& input, int64_t dim, bool keepdim) {
  return ExtremeDim<true>(input, dim, keepdim);
}
std::tuple<Tensor, Tensor> MinDim(const Tensor& input, int64_t dim, bool keepdim) {
  return ExtremeDim<false>(input, dim, keepdim);
}

Tensor SliceView(const Tensor& input, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  Tensor r = ::oneflow::SliceView(input, dim, start, stop, step);
  if (!Recording(input)) return r;
  // Re-slicing a zero buffer of the input's shape with the same (already validated) arguments.
  DimVector sizes = input.sizes();
  SetHistory(r, MakeNode("SliceBackward0", input, [=](std::vector<Tensor>& g) {
                  return ViewGrad(g[0], sizes, [&](const Tensor& b) { return ::oneflow::SliceView(b, dim, start, stop, step); });
                }).get());
  return r;
}

Tensor SelectView(const Tensor& input, int64_t dim, int64_t index) {
  Tensor r = ::oneflow::SelectView(input, dim, index);
  if (!Recording(input)) return r;
  DimVector sizes = input.sizes();
  SetHistory(r, MakeNode("SelectBackward0", input, [=](std::vector<Tensor>& g) {
                  return ViewGrad(g[0], sizes, [&](const Tensor& b) { return ::oneflow::SelectView(b, dim, index); });
                }).get());
  return r;
}

struct IndexBackward final : Node {
  const char* name() const override { return "IndexBackward0"; }
  std::vector<Tensor> indices_;  // integer tensors: never modified by autograd users' in-place ops
  DimVector sizes_;
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override {
    Tensor buf = ::oneflow::Zeros(sizes_, grads[0].dtype(), grads[0].device(), false);
    functional::IndexPut_(buf, indices_, grads[0], true);
    return {buf};
  }
};

Tensor IndexGather(const Tensor& input, const std::vector<Tensor>& indices) {
  Tensor r = ::oneflow::IndexGather(input, indices);
  if (!Recording(input)) return r;
  IntrusivePtr<IndexBackward> node(new IndexBackward());
  node->next_.push_back(GradEdge(input));
  node->indices_ = indices;
  node->sizes_ = input.sizes();
  SetHistory(r, node.get());
  return r;
}

struct CopyBackward final : Node {
  const char* name() const override { return "CopyBackwards"; }
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override {
    // self's old values are all overwritten; src gets the gradient (summed/cast by the engine).
    return {needs(0) ? ZerosFor(grads[0]) : Tensor(), needs(1) ? grads[0] : Tensor()};
  }
};

namespace {
// copy_ as a program node (the kernel: the autograd recording is CopyFrom_'s own, at trace time).
std::vector<Tensor> CopyKernelNode(const std::vector<Value>& a) {
  const Tensor& self = std::get<Tensor>(a[0]);
  ::oneflow::CopyFrom(self, std::get<Tensor>(a[1]));
  return {self};
}
// The kernel, or while a graph traces the copy_ node, below the autograd recording as in the
// generated entries (Note [Backward nodes]: formulas write gradients into views of buffers).
void CopyKernel(const Tensor& self, const Tensor& src) {
  if (auto* tr = lazy::Active()) [[unlikely]] {
    tr->Record("copy_", &CopyKernelNode, {Value(self), Value(src)}, nullptr, true);
    return;
  }
  ::oneflow::CopyFrom(self, src);
}
}  // namespace

void CopyFrom_(const Tensor& self, const Tensor& src) {
  if (!GradMode::is_enabled() || !(RequiresGrad(self) || RequiresGrad(src))) {
    CopyKernel(self, src);
    return;
  }
  CheckInplace(self, "copy_");
  IntrusivePtr<CopyBackward> node(new CopyBackward());
  node->next_.push_back(GradEdge(self));
  node->next_.push_back(GradEdge(src));
  CopyKernel(self, src);
  if (IsDifferentiableType(self.dtype())) RebaseHistory(self, node.get());
}

Tensor Detach(const Tensor& t) {
  TensorImpl* i = t.impl();
  return Tensor(MakeIntrusive<TensorImpl>(i->storage_, i->offset_, i->sizes_, i->strides_, i->dtype_));
}

}  // namespace oneflow::functional
