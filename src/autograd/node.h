// The backward graph: a Node per recorded op, Edges to the nodes of its inputs.
// Note [Ownership]: a node owns the nodes of its inputs (edges hold strong references) and the
// tensors it saved; a tensor owns its grad_fn. Leaves are reached through an AccumulateGrad node
// that owns the leaf; the leaf only points back at it weakly (AutogradMeta::grad_accumulator_),
// so no cycle keeps either alive.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <vector>

#include "core/intrusive_ptr.h"
#include "core/tensor.h"

namespace oneflow {

// Tensors of these dtypes take part in autograd: floating and complex (Note [Complex dtypes]).
inline bool IsDifferentiableType(DType t) { return IsFloating(t) || IsComplex(t); }

class Node;

struct Edge {
  IntrusivePtr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return static_cast<bool>(fn); }
};

// Shape/dtype of one forward output, so a missing gradient can be materialised as zeros.
struct OutputMeta {
  DimVector sizes;
  DType dtype;
  Device device;
};

// A tensor hook: returns a replacement gradient, or an undefined tensor to keep the gradient.
using GradHook = std::function<Tensor(const Tensor&)>;

class Node : public RefCounted {
 public:
  Node();
  ~Node() override;
  virtual const char* name() const = 0;
  // grads: one per forward output (undefined = no gradient reached it); returns one per next edge.
  virtual std::vector<Tensor> Apply(std::vector<Tensor>& grads) = 0;
  // Frees saved tensors after a backward without retain_graph.
  virtual void ReleaseSaved() {}
  // Whether Apply fills in zeros for outputs that got no gradient (multi-output nodes).
  virtual bool MaterializeGrads() const { return outputs_.size() > 1; }

  bool needs(size_t k) const { return k < next_.size() && next_[k].valid(); }
  uint32_t AddOutput(const Tensor& t);  // records output meta; returns the output number

  struct PreHook {
    uint32_t output_nr;
    int64_t id;
    GradHook fn;
    TensorImpl* retain_owner;  // non-null: a retain_grad() hook writing into this tensor's .grad
  };

  // Note [Node hooks]: grad_fn.register_prehook / register_hook, as PyTorch's Node hooks. When the
  // node runs, each pre-hook sees the gradients flowing into it (one per forward output, after
  // the tensor hooks) and may return replacements; after Apply each post-hook sees the gradients
  // the node produced (one per next edge) and those it consumed, and may replace the produced
  // ones. A node that does not run (off the path to autograd.grad's inputs) runs neither.
  using GradList = std::vector<Tensor>;
  struct NodePreHook {
    int64_t id;
    std::function<std::optional<GradList>(const GradList& consumed)> fn;
  };
  struct NodePostHook {
    int64_t id;
    std::function<std::optional<GradList>(const GradList& produced, const GradList& consumed)> fn;
  };

  std::vector<Edge> next_;
  std::vector<OutputMeta> outputs_;
  std::vector<PreHook> pre_hooks_;
  std::vector<NodePreHook> node_pre_hooks_;
  std::vector<NodePostHook> post_hooks_;
  uint64_t seq_nr_;
};

// Drops a reference to a node without recursing into long chains (Note [Iterative teardown]).
void ReleaseNode(IntrusivePtr<Node>&& n);

// Note [Saved tensor hooks]: inside autograd.graph.saved_tensors_hooks(pack, unpack) every tensor
// a node saves goes through pack (whose result is kept instead of the tensor: save_on_cpu moves
// it to host memory) and comes back through unpack when backward needs it, as in PyTorch. The
// hooks are Python callables, so the API layer implements these two interfaces.
class PackedTensor {
 public:
  virtual ~PackedTensor() = default;
  virtual Tensor Unpack() const = 0;
};
class SavedTensorHooks {
 public:
  virtual ~SavedTensorHooks() = default;
  virtual std::shared_ptr<PackedTensor> Pack(const Tensor& t) = 0;
};
// This thread's innermost hooks (null: none).
SavedTensorHooks* CurrentSavedTensorHooks();
void PushSavedTensorHooks(std::shared_ptr<SavedTensorHooks> hooks);
void PopSavedTensorHooks();

// A tensor saved for backward, with the storage version it had when saved (Note [Version counter]).
class SavedVariable {
 public:
  SavedVariable() = default;
  // is_output: the tensor is an output of the node saving it; stored without its autograd link
  // to avoid a node -> tensor -> node cycle, and re-linked on Unpack when building a higher-order
  // graph.
  SavedVariable(const Tensor& t, bool is_output);
  Tensor Unpack(Node* owner) const;
  void Reset();
  bool defined() const { return saved_; }

 private:
  Tensor Relinked(const Tensor& t, Node* owner) const;

  Tensor data_;
  std::shared_ptr<PackedTensor> packed_;  // instead of data_ under saved tensor hooks
  uint32_t version_ = 0;
  uint32_t output_nr_ = 0;
  bool saved_ = false;
  bool released_ = false;
  bool is_output_ = false;
  bool requires_grad_ = false;
};

// Autograd state of a tensor; null on tensors that never met autograd.
struct AutogradMeta {
  Tensor grad_;
  IntrusivePtr<Node> grad_fn_;
  uint32_t output_nr_ = 0;
  Node* grad_accumulator_ = nullptr;  // weak: the AccumulateGrad node clears it when it dies
  std::vector<std::pair<int64_t, GradHook>> leaf_hooks_;  // hooks of a leaf, run by AccumulateGrad
  bool retains_grad_ = false;
  // A view's grad_fn is valid for the storage version it was made at; when the base was changed
  // in place afterwards, the view's grad_fn is regenerated from the base's new history.
  uint32_t view_version_ = 0;
  TensorImpl* owner_ = nullptr;
  ~AutogradMeta();
};

AutogradMeta* GetMeta(const Tensor& t);       // may be null
AutogradMeta& MutableMeta(const Tensor& t);   // creates it

// requires_grad of t, counting a view whose base acquired a history through another view.
inline bool RequiresGrad(const Tensor& t) {
  if (!t.defined()) return false;
  TensorImpl* i = t.impl();
  if (i->requires_grad_) return true;
  TensorImpl* b = i->view_base_.get();
  return b && b->autograd_meta_ && b->autograd_meta_->grad_fn_;
}
inline bool AnyRequiresGrad(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (RequiresGrad(t)) return true;
  return false;
}
bool IsLeaf(const Tensor& t);

// The edge through which a gradient for t flows (its grad_fn or its leaf accumulator).
Edge GradEdge(const Tensor& t);
// Makes `node` the grad_fn of output `t` (output number = order of calls).
void SetHistory(const Tensor& t, Node* node);
// After an in-place op: t's history becomes `node` (output 0); a view's base is rebased too.
void RebaseHistory(const Tensor& t, Node* node);
// Raises if an in-place op may not modify t while recording (leaf requiring grad, view of one).
void CheckInplace(const Tensor& t, const char* op);

}  // namespace oneflow
