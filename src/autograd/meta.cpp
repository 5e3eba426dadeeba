// Autograd state on tensors: saved variables, history (grad_fn) and the rules for in-place ops
// on views (Note [Views and in-place]).
#include <algorithm>
#include <atomic>

#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/saved_hooks.h"
#include "autograd/special_nodes.h"
#include "core/error.h"
#include "graph/lazy.h"

namespace oneflow {

namespace {
std::atomic<uint64_t> g_next_seq{0};
}

Node::Node() : seq_nr_(g_next_seq.fetch_add(1, std::memory_order_relaxed)) {}

namespace {
// Note [Iterative teardown]: a graph of 100k ops is a 100k-deep chain of owners (node -> input
// node, node -> saved tensor -> its grad_fn). Releasing it recursively would overflow the stack,
// so the last reference to a node is handed to a queue drained by the outermost release.
thread_local std::vector<IntrusivePtr<Node>>* g_pending = nullptr;
}  // namespace

void ReleaseNode(IntrusivePtr<Node>&& n) {
  if (!n) return;
  if (n->RefCount() > 1) {
    n.Reset();
    return;
  }
  if (g_pending) {
    g_pending->push_back(std::move(n));
    return;
  }
  std::vector<IntrusivePtr<Node>> pending;
  g_pending = &pending;
  pending.push_back(std::move(n));
  while (!pending.empty()) {
    IntrusivePtr<Node> x = std::move(pending.back());
    pending.pop_back();
    x.Reset();  // its destructor queues what it owned
  }
  g_pending = nullptr;
}

Node::~Node() {
  for (Edge& e : next_) ReleaseNode(std::move(e.fn));
}

uint32_t Node::AddOutput(const Tensor& t) {
  outputs_.push_back(OutputMeta{t.sizes(), t.dtype(), t.device()});
  return outputs_.size() - 1;
}

AutogradMeta::~AutogradMeta() {
  // A retain_grad hook points at this tensor: it must not outlive it.
  if (grad_fn_ && retains_grad_) {
    auto& h = grad_fn_->pre_hooks_;
    h.erase(std::remove_if(h.begin(), h.end(), [&](const Node::PreHook& p) { return p.retain_owner == owner_; }),
            h.end());
  }
  ReleaseNode(std::move(grad_fn_));
}

void DeleteAutogradMeta(AutogradMeta* m) { delete m; }

AutogradMeta* GetMeta(const Tensor& t) { return t.impl()->autograd_meta_; }

AutogradMeta& MutableMeta(const Tensor& t) {
  TensorImpl* i = t.impl();
  if (!i->autograd_meta_) {
    i->autograd_meta_ = new AutogradMeta();
    i->autograd_meta_->owner_ = i;
  }
  return *i->autograd_meta_;
}

bool IsLeaf(const Tensor& t) {
  AutogradMeta* m = GetMeta(t);
  if (m && m->grad_fn_) return false;
  // A view whose base gained a history (through another view) is no longer a leaf either.
  TensorImpl* b = t.impl()->view_base_.get();
  return !(b && b->autograd_meta_ && b->autograd_meta_->grad_fn_);
}

// ---- saved variables --------------------------------------------------------------------

namespace {
thread_local std::vector<std::shared_ptr<SavedTensorHooks>> t_saved_hooks;

// The saved output's values without its autograd link (see the header).
Tensor Unlinked(const Tensor& t) {
  TensorImpl* i = t.impl();
  return Tensor(MakeIntrusive<TensorImpl>(i->storage_, i->offset_, i->sizes_, i->strides_, i->dtype_));
}
}  // namespace

namespace {
using UnpackCache = std::vector<std::pair<const void*, Tensor>>;
// The cache exists only once something is unpacked under hooks: opening a scope per node
// application costs two thread-local writes, no allocation.
thread_local UnpackCache* t_unpack_cache = nullptr;
thread_local bool t_unpack_open = false;
}  // namespace

UnpackScope::UnpackScope() : prev_cache_(t_unpack_cache), prev_open_(t_unpack_open) {
  t_unpack_cache = nullptr;
  t_unpack_open = true;
}
UnpackScope::~UnpackScope() {
  delete t_unpack_cache;
  t_unpack_cache = static_cast<UnpackCache*>(prev_cache_);
  t_unpack_open = prev_open_;
}

Tensor UnpackOnce(const void* key, const std::function<Tensor()>& unpack) {
  if (!t_unpack_open) return unpack();
  if (!t_unpack_cache) t_unpack_cache = new UnpackCache();
  for (const auto& [k, t] : *t_unpack_cache)
    if (k == key) return t;
  Tensor t = unpack();
  t_unpack_cache->emplace_back(key, t);
  return t;
}

SavedTensorHooks* CurrentSavedTensorHooks() { return t_saved_hooks.empty() ? nullptr : t_saved_hooks.back().get(); }
void PushSavedTensorHooks(std::shared_ptr<SavedTensorHooks> hooks) { t_saved_hooks.push_back(std::move(hooks)); }
void PopSavedTensorHooks() {
  if (!t_saved_hooks.empty()) t_saved_hooks.pop_back();
}

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  saved_ = true;
  version_ = t.storage()->version();
  is_output_ = is_output;
  requires_grad_ = RequiresGrad(t);
  AutogradMeta* m = is_output ? GetMeta(t) : nullptr;
  output_nr_ = m ? m->output_nr_ : 0;
  if (SavedTensorHooks* hooks = CurrentSavedTensorHooks()) {  // Note [Saved tensor hooks]
    packed_ = hooks->Pack(is_output ? Unlinked(t) : t);
    return;
  }
  data_ = is_output ? Unlinked(t) : t;
}

void SavedVariable::Reset() {
  data_ = Tensor();
  packed_.reset();
  released_ = true;
}

Tensor SavedVariable::Unpack(Node* owner) const {
  OF_CHECK(!released_)
      << "Trying to backward through the graph a second time (or directly access saved tensors after "
         "they have already been freed). Saved intermediate values of the graph are freed when you call "
         ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
         "graph a second time or if you need to access saved tensors after calling backward.";
  if (!saved_) return Tensor();
  if (packed_) {
    // What unpack returns stands for the saved tensor (no version check: pack may have copied).
    // A saved input's link to its own history is not kept under hooks (the tensor is not), so a
    // higher-order gradient through it is refused rather than silently missing.
    OF_CHECK_KIND(is_output_ || !requires_grad_ || !GradMode::is_enabled(), ErrorKind::kNotImplemented)
        << "backward with create_graph=True through a tensor saved under saved_tensors_hooks (by "
        << owner->name() << ") is not supported yet";
    return Relinked(UnpackOnce(this, [this] { return packed_->Unpack(); }), owner);
  }
  const uint32_t now = data_.storage()->version();
  OF_CHECK(now == version_)
      << "one of the variables needed for gradient computation has been modified by an inplace "
         "operation: [" << DTypeName(data_.dtype()) << " tensor of shape " << ShapeStr(data_.sizes())
      << "], which is saved by " << owner->name() << ", is at version " << now << "; expected version "
      << version_ << " instead. Hint: the operation that failed to compute its gradient used a tensor "
                     "that was changed afterwards by an in-place op (e.g. x.add_(1) or x[0] = 1).";
  return Relinked(data_, owner);
}

// create_graph: the saved output is differentiable through the node that produced it.
Tensor SavedVariable::Relinked(const Tensor& t, Node* owner) const {
  if (!(is_output_ && requires_grad_ && GradMode::is_enabled())) return t;
  Tensor linked = Unlinked(t);
  AutogradMeta& m = MutableMeta(linked);
  m.grad_fn_ = IntrusivePtr<Node>(owner);
  m.output_nr_ = output_nr_;
  linked.impl()->requires_grad_ = true;
  return linked;
}

// ---- history --------------------------------------------------------------------------

namespace {

// The gradient function of a view whose base's history changed since the view was made.
void RegenerateViewGradFn(const Tensor& view) {
  Tensor base(view.impl()->view_base_);
  IntrusivePtr<Node> node(new AsStridedBackward(base, view));
  node->next_.push_back(GradEdge(base));
  SetHistory(view, node.get());
}

// retain_grad() follows the tensor to its new grad_fn when an in-place op rebases it.
void MoveRetainHook(AutogradMeta& m, Node* to, uint32_t output_nr) {
  if (!m.retains_grad_ || !m.grad_fn_ || m.grad_fn_.get() == to) return;
  auto& h = m.grad_fn_->pre_hooks_;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it->retain_owner == m.owner_) {
      Node::PreHook moved = std::move(*it);
      h.erase(it);
      moved.output_nr = output_nr;
      to->pre_hooks_.push_back(std::move(moved));
      return;
    }
  }
}

}  // namespace

Edge GradEdge(const Tensor& t) {
  if (!RequiresGrad(t)) return {};
  TensorImpl* i = t.impl();
  AutogradMeta* m = i->autograd_meta_;
  if (i->view_base_ && RequiresGrad(Tensor(i->view_base_)) &&
      (!m || !m->grad_fn_ || m->view_version_ != i->storage_->version())) {
    RegenerateViewGradFn(t);
    m = i->autograd_meta_;
  }
  if (m && m->grad_fn_) return Edge{m->grad_fn_, m->output_nr_};
  return Edge{IntrusivePtr<Node>(AccumulateGrad::For(t)), 0};
}

void SetHistory(const Tensor& t, Node* node) {
  AutogradMeta& m = MutableMeta(t);
  const uint32_t nr = node->AddOutput(t);
  MoveRetainHook(m, node, nr);
  m.grad_fn_ = IntrusivePtr<Node>(node);
  m.output_nr_ = nr;
  TensorImpl* i = t.impl();
  i->requires_grad_ = true;
  if (i->view_base_) m.view_version_ = i->storage_->version();
}

void RebaseHistory(const Tensor& t, Node* node) {
  // While a graph traces, an in-place op on a captured tensor (a real one, not a lazy stand-in)
  // runs in the program, not now (Note [Writes to free tensors], src/graph/free_writes.h): the
  // tensor's history stays as it is outside the graph (the traced node saved meta tensors), and
  // the traced backward cannot follow the write: it stays a Python step, which differentiates
  // the real write when the program runs with grad on.
  if (lazy::Tracer* tr = lazy::Active(); tr && t.device().type != DeviceType::kMeta) [[unlikely]] {
    tr->Opaque("an in-place op on a captured tensor");
    return;
  }
  TensorImpl* i = t.impl();
  if (!i->view_base_) {
    SetHistory(t, node);
    return;
  }
  // Note [Views and in-place]: writing into a view changes its base. The base's new history is
  // CopySlices(base's old history, node): its gradient is the incoming one with the view's region
  // taken out (that part flows to `node`); the view's own grad_fn is then a view of the base.
  Tensor base(i->view_base_);
  node->AddOutput(t);
  IntrusivePtr<Node> cs(new CopySlices(base, t));
  cs->next_.push_back(GradEdge(base));
  cs->next_.push_back(Edge{IntrusivePtr<Node>(node), 0});
  SetHistory(base, cs.get());
  RegenerateViewGradFn(t);
}

// Note [Upstream's words]: where upstream OneFlow's own tests (python/oneflow/test/exceptions)
// assert its wording for an op PyTorch also has, the message is PyTorch's (and its exception type),
// then upstream's text in brackets after "[OneFlow: ": code written for either framework finds what
// it matches on, and tests/error_cases.py's raises_like_torch compares the PyTorch part exactly.
void CheckInplace(const Tensor& t, const char* op) {
  if (!GradMode::is_enabled()) return;
  TensorImpl* i = t.impl();
  OF_CHECK(!(i->requires_grad_ && !(i->autograd_meta_ && i->autograd_meta_->grad_fn_)))
      << "a leaf Variable that requires grad is being used in an in-place operation. [OneFlow: a leaf Tensor that "
         "requires grad is being used in an in-place operation]";
  TensorImpl* b = i->view_base_.get();
  OF_CHECK(!(b && b->requires_grad_ && !(b->autograd_meta_ && b->autograd_meta_->grad_fn_)))
      << "a view of a leaf Variable that requires grad is being used in an in-place operation.";
}

}  // namespace oneflow
