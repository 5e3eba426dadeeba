// Lazy tracing and the traced Program (see lazy.h).
#include "graph/lazy.h"

#include <mutex>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "autograd/autocast.h"
#include "autograd/engine.h"
#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/special_nodes.h"
#include "core/error.h"
#include "core/storage_offer.h"
#include "graph/dynamic_shapes.h"
#include "graph/fusion.h"
#include "graph/memory_plan.h"
#include "graph/passes.h"
#include "graph/serialize.h"

namespace oneflow::lazy {

std::atomic<int> g_tracers{0};

namespace {

thread_local Tracer* t_current = nullptr;

// Meta inference runs the op's entry, whose binding must not record it again.
class Suspend {
 public:
  Suspend() : prev_(t_current) { t_current = nullptr; }
  ~Suspend() { t_current = prev_; }

 private:
  Tracer* prev_;
};

// Schemas by name, indexed once (a thread-safe static; read-only after): tracing looks one up
// per recorded op, possibly on several threads at once.
const OpSchema& SchemaFor(const char* op) {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, const OpSchema*>();
    for (const OpSchema& s : Boxed().all()) m->emplace(s.name, &s);
    return m;
  }();
  auto it = index->find(op);
  OF_CHECK_KIND(it != index->end(), ErrorKind::kNotImplemented)
      << "nn.Graph: the op '" << op << "' cannot be traced (it has no boxed form); call it outside build()";
  return *it->second;
}

LocationFn g_location = nullptr;

// Note [Dynamic shapes]: node n called on its arguments `a` with each slot argument's value in the
// tracing call (Tracer::Evaluate; a ref read for its sizes only is skipped: the tracing call's are
// the traced ones) and the graph's device for a meta Device, as the executor runs it.
std::vector<Tensor> CallOnTracingValues(Tracer& tr, const Node& n, std::vector<Value>& a, const Device& device,
                                        const std::string& op) {
  for (const SlotRef& r : n.refs) {
    if (r.arg < 0) continue;
    Tensor v = tr.Evaluate(r.slot, op);
    if (r.elem < 0) a[r.arg] = std::move(v);
    else std::get<std::vector<Tensor>>(a[r.arg])[r.elem] = std::move(v);
  }
  for (int k : n.devices) a[k] = device;
  Suspend suspend;
  AutoGradMode no_grad(false);
  std::optional<autocast::ExcludeGuard> no_autocast;
  if (n.backward) no_autocast.emplace();  // (backward nodes run with autocast off)
  return n.Call(a);
}

// A node's call; with an arena (Note [Storage offers], memory_plan.h), the output it computes gets
// its planned bytes: a fused node is handed its output tensor, any other kernel's allocation of
// exactly that size takes them. Not with grad: autograd may keep any value for the backward.
std::vector<Tensor> CallNode(const Program& p, size_t i, std::vector<Value>& a, const ArenaPlan* plan,
                             Storage* arena) {
  const Node& n = p.nodes[i];
  if (!arena || i >= plan->outputs.size() || plan->outputs[i].first < 0 || GradMode::is_enabled()) return n.Call(a);
  StorageOffer offer;
  offer.data = static_cast<char*>(arena->data()) + plan->outputs[i].first;
  offer.nbytes = static_cast<size_t>(plan->outputs[i].second);
  offer.owner = arena;
  if (int k = FusedOutputArg(n); k >= 0) {
    const Tensor& m = p.meta[n.outs[0]];
    offer.Open();
    Tensor out = Empty(m.sizes(), m.dtype(), Device{DeviceType::kCPU, -1});
    CountArenaPlacement(offer.Settle(out.storage()));
    a[k] = out;
    return n.Call(a);
  }
  std::vector<Tensor> outs;
  offer.Open();
  try {
    outs = n.Call(a);
  } catch (...) {
    offer.Settle(nullptr);
    throw;
  }
  CountArenaPlacement(offer.Settle(outs.empty() || !outs[0].defined() ? nullptr : outs[0].storage()));
  return outs;
}

// ---- Note [Local autograd nodes] (Tracer::Record) ----
// An op autograd did not see (a hand-written binding or entry: indexing, split, max / min, the
// manual / composite table ops) called on inputs requiring grad is one node whose gradient is its
// own eager autograd: the node is the op's own node, with the positions of those inputs in
// Node::local_grads; its call (CallLocal) runs the op with grad mode on, on detached leaves of
// those inputs, and returns the leaves after the op's outputs. (The positions are a field, not
// arguments of a wrapper function: the passes, the printer and a saved program see the op
// itself.) While tracing, its lazy outputs get a LocalGradNode history, whose traced backward
// records one `<op>_local_backward` node (LocalBackward: autograd.grad of the real outputs with
// respect to the leaves). So the
// backward stays nodes of the program, with no Python step. (An op that writes an argument,
// setitem, has no such local graph: its backward stays a Python step.)

// The argument at `pos` of a node's (copied) arguments.
Tensor& ArgAt(std::vector<Value>& a, ArgPos pos) {
  Tensor* t = pos.elem < 0 ? &std::get<Tensor>(a[static_cast<size_t>(pos.arg)])
                           : &std::get<std::vector<Tensor>>(a[static_cast<size_t>(pos.arg)])[static_cast<size_t>(pos.elem)];
  return *t;
}

// The leaves (by impl) the new outputs' autograd graph reaches (outputs [0, n)).
std::unordered_set<const TensorImpl*> ReachedLeaves(const std::vector<Tensor>& outs, size_t n) {
  std::unordered_set<const TensorImpl*> reached;
  std::unordered_set<const ::oneflow::Node*> seen;
  std::vector<::oneflow::Node*> todo;
  for (size_t j = 0; j < n; ++j)
    if (const AutogradMeta* m = outs[j].defined() ? GetMeta(outs[j]) : nullptr; m && m->grad_fn_)
      todo.push_back(m->grad_fn_.get());
  while (!todo.empty()) {
    ::oneflow::Node* node = todo.back();
    todo.pop_back();
    if (!seen.insert(node).second) continue;
    if (const auto* acc = dynamic_cast<const AccumulateGrad*>(node)) reached.insert(acc->variable().impl());
    for (const Edge& e : node->next_)
      if (e.fn) todo.push_back(e.fn.get());
  }
  return reached;
}

// A tensor argument (or an element of a tensor-list argument) requires grad.
bool ArgsRequireGrad(const std::vector<Value>& args) {
  for (const Value& v : args) {
    if (const auto* t = std::get_if<Tensor>(&v); t && t->defined() && RequiresGrad(*t)) return true;
    if (const auto* ts = std::get_if<std::vector<Tensor>>(&v))
      for (const Tensor& t : *ts)
        if (t.defined() && RequiresGrad(t)) return true;
  }
  return false;
}

}  // namespace

// A local-autograd node (Node::local_grads): the op's own node, its call run here. With grad mode
// on (the program keeps an autograd graph because a backward is a Python step) the op runs as any
// node and its inputs stand for the leaves. Meta inference runs the op with autograd on meta
// leaves too: a leaf its outputs' graph does not reach comes back undefined (its input gets no
// gradient from this op, as in eager).
std::vector<Tensor> CallLocal(const Node& n, const std::vector<Value>& args) {
  std::vector<Value> a = args;
  std::vector<Tensor> leaves, inputs, outs;
  const bool meta = ArgAt(a, n.local_grads[0]).device().type == DeviceType::kMeta;
  if (!meta && GradMode::is_enabled()) {
    for (ArgPos pos : n.local_grads) leaves.push_back(ArgAt(a, pos));
    outs = n.fn(a);
    outs.insert(outs.end(), leaves.begin(), leaves.end());
    return outs;
  }
  for (ArgPos pos : n.local_grads) {
    Tensor& t = ArgAt(a, pos);
    inputs.push_back(t);
    t = functional::Detach(t);
    t.impl()->requires_grad_ = true;
    leaves.push_back(t);
  }
  {
    AutoGradMode on(true);
    outs = n.fn(a);
  }
  const size_t num = outs.size();
  for (Tensor& o : outs)  // an op returning its input returns the input, not the leaf
    for (size_t i = 0; i < leaves.size(); ++i)
      if (o.defined() && o.impl() == leaves[i].impl()) o = inputs[i];
  if (meta) {
    const auto reached = ReachedLeaves(outs, num);
    for (Tensor& l : leaves)
      if (!reached.count(l.impl())) l = Tensor();
  }
  outs.insert(outs.end(), leaves.begin(), leaves.end());
  return outs;
}

namespace {

// The backward node: gradients of the outputs `a[0]` seeded with `a[1]` with respect to the
// leaves `a[2]`, through the graph the forward node built (kept: another backward may read it).
std::vector<Tensor> LocalBackward(const std::vector<Value>& a) {
  const auto& outs = std::get<std::vector<Tensor>>(a[0]);
  const auto& grads = std::get<std::vector<Tensor>>(a[1]);
  const auto& leaves = std::get<std::vector<Tensor>>(a[2]);
  std::vector<Tensor> r;
  if (outs.at(0).device().type == DeviceType::kMeta) {  // meta inference: the leaves' shapes
    for (const Tensor& l : leaves) r.push_back(Empty(l.sizes(), l.dtype(), Device{DeviceType::kMeta, -1}));
    return r;
  }
  BackwardOptions opt;
  opt.keep_graph = true;
  opt.allow_unused = true;
  r = RunBackward(outs, grads, leaves, opt);
  for (size_t k = 0; k < r.size(); ++k)  // an input the outputs do not depend on
    if (!r[k].defined()) r[k] = ZerosWithGeometry(Geometry(leaves[k]), leaves[k].dtype(), leaves[k].device());
  return r;
}

// The grad_fn of an op's lazy outputs in a trace with autograd off (Note [Requires grad without
// autograd]): their gradient is the eager backward of the program's real tensors, never traced.
class UntracedGradNode final : public ::oneflow::Node {
 public:
  explicit UntracedGradNode(const std::string& op) : op_(op) {}
  const char* name() const override { return "UntracedBackward"; }
  std::vector<Tensor> Apply(std::vector<Tensor>&) override {
    OF_CHECK(false) << "nn.Graph: the gradient of " << op_ << " is computed when the program runs "
                    << "(autograd is off while a graph of global tensors traces)";
    return {};
  }

 private:
  std::string op_;
};

// The history of a local-autograd node's lazy outputs while tracing: the traced engine applies
// it to lazy gradients, which records the LocalBackward node.
class LocalGradNode final : public ::oneflow::Node {
 public:
  LocalGradNode(Tracer* tr, const std::string& op, std::vector<Tensor> leaves)
      : tr_(tr), label_(op + "_local_backward"), leaves_(std::move(leaves)) {}
  const char* name() const override { return "LocalGradBackward"; }
  bool MaterializeGrads() const override { return false; }
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override {
    OF_CHECK(CurrentTracer() == tr_) << "nn.Graph: the gradient of " << label_ << " is only computed inside build()";
    std::vector<Tensor> outs, gs;
    for (size_t j = 0; j < grads.size() && j < outs_.size(); ++j)
      if (grads[j].defined()) {
        // (the tracer keeps the lazy outputs alive while it traces; raw: no output -> node cycle)
        outs.push_back(Tensor(IntrusivePtr<TensorImpl>(outs_[j])));
        gs.push_back(grads[j]);
      }
    if (outs.empty()) return std::vector<Tensor>(next_.size());
    return tr_->Record(label_.c_str(), &LocalBackward, {Value(outs), Value(gs), Value(leaves_)}, nullptr, true);
  }
  std::vector<TensorImpl*> outs_;  // per autograd output: the lazy tensor

 private:
  Tracer* tr_;
  std::string label_;
  std::vector<Tensor> leaves_;  // the lazy leaves (no history: no cycle)
};

// Ops that write an argument: the in-place names and the writers without one.
bool WritesArgument(std::string_view op) {
  if (op == "setitem" || op == "slice_update") return true;
  return op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_';
}

}  // namespace

NodeFn LocalBackwardFn() { return &LocalBackward; }  // (serialize.h)

Tracer* CurrentTracer() { return t_current; }

void SetLocationHook(LocationFn fn) { g_location = fn; }

// ---- Tracer ----

Tracer::Tracer(Device device) : prog_(std::make_shared<Program>()) { prog_->device = device; }

Tracer::~Tracer() {
  if (active_) End();
}

void Tracer::Begin() {
  OF_CHECK(!active_ && prog_) << "nn.Graph: this tracer is already in use";
  OF_CHECK(!t_current) << "nn.Graph: build() of one graph cannot call another graph while it is traced";
  t_current = this;
  active_ = true;
  g_tracers.fetch_add(1);
}

void Tracer::End() {
  if (!active_) return;
  if (t_current == this) t_current = nullptr;
  active_ = false;
  g_tracers.fetch_sub(1);
}

int Tracer::NewSlot(const Tensor& t) {
  int s = prog_->num_slots++;
  slot_of_[t.impl()] = s;
  by_storage_[t.storage()].push_back(s);
  lazies_.push_back(t);
  prog_->meta.push_back(t);
  prog_->dynamic.resize(prog_->num_slots, 0);
  return s;
}

Tensor Tracer::Input(const Tensor& like) {
  Tensor m = ToMeta(like);
  m.impl()->is_wrapped_number_ = false;
  m.impl()->requires_grad_ = like.requires_grad();
  const int s = NewSlot(m);
  prog_->inputs.push_back(s);
  if (like.device().type != DeviceType::kMeta) real_[s] = like;  // (Note [Dynamic shapes]: Evaluate)
  return m;
}

int Tracer::SlotOf(const Tensor& t) const {
  auto it = slot_of_.find(t.impl());
  if (it != slot_of_.end()) return it->second;
  if (!in_backward_ || !t.defined() || t.device().type != DeviceType::kMeta) return -1;
  // (only in the traced backward: elsewhere a new tensor is a new value, e.g. a Python step's
  // output that views its input) Autograd saves an op's output as another tensor object over the same storage (no grad_fn
  // cycle, SavedVariable): a formula unpacking it reads the slot with the same storage and
  // geometry (the latest one: a view with the input's geometry holds the same values).
  auto by = by_storage_.find(t.storage());
  if (by == by_storage_.end()) return -1;
  for (auto k = by->second.rbegin(); k != by->second.rend(); ++k) {
    const Tensor& m = prog_->meta[*k];
    if (m.dtype() == t.dtype() && m.offset() == t.offset() && m.sizes() == t.sizes() && m.strides() == t.strides())
      return *k;
  }
  return -1;
}

int Tracer::Barrier(const std::vector<int>& ins, const std::vector<int>& outs) {
  Node n;
  n.name = "barrier";
  n.fn = nullptr;
  n.grad_enabled = GradMode::is_enabled();
  n.barrier = 0;
  for (const Node& m : prog_->nodes) n.barrier += m.barrier >= 0;
  for (int s : ins) {
    OF_CHECK(s >= 0 && s < prog_->num_slots) << "nn.Graph: barrier input slot " << s << " does not exist";
    n.refs.push_back({-1, -1, s});
  }
  n.outs = outs;
  prog_->nodes.push_back(std::move(n));
  return prog_->nodes.back().barrier;
}

int Tracer::AddSlot(const Tensor& meta) {
  OF_CHECK(meta.defined() && meta.device().type == DeviceType::kMeta && SlotOf(meta) < 0)
      << "nn.Graph: a barrier's output must be a new meta tensor";
  if (meta.requires_grad()) Opaque("a Python step");  // its gradient is the step's own Python
  return NewSlot(meta);
}

void Tracer::Pin(int slot) { prog_->pinned.push_back(slot); }

void Tracer::Output(int slot) {
  OF_CHECK(slot >= 0 && slot < prog_->num_slots) << "nn.Graph: output slot " << slot << " does not exist";
  prog_->pinned.push_back(slot);
  prog_->outputs.push_back(slot);
}

void Tracer::Name(const Tensor& captured, std::string name) {
  if (captured.defined()) prog_->names[captured.impl()] = std::move(name);
}

std::vector<Tensor> Tracer::Record(const char* name, NodeFn fn, std::vector<Value> args, const OpSchema* schema,
                                   bool tracked) {
  OpScope scope(name);
  Node n;
  n.name = name;
  n.fn = fn;
  n.schema = schema;
  n.scope = scope_;
  if (g_location) n.loc = g_location();
  n.grad_enabled = GradMode::is_enabled();
  n.backward = in_backward_;
  // Note [Dynamic shapes]: an op whose output's size its inputs' values decide runs on the
  // tracing call's values instead of meta inference.
  const bool value_dependent = schema && IsValueDependent(name, args);
  // Note [Local autograd nodes]: an op autograd did not see, on inputs requiring grad.
  std::vector<Tensor> grad_inputs;  // (before the slots clear the arguments)
  // Note [Requires grad without autograd]: with autograd off (a graph of global tensors, whose
  // backward is a Python step on the real tensors) an op on an input requiring grad makes outputs
  // that will require grad when the program runs: they say so now, since code after the op reads
  // it -- the global dispatcher passes a broadcast input of a split or partial use through
  // BroadcastUse only then. They get an UntracedGradNode as grad_fn: not leaves, as in eager (an
  // in-place write on them is no write on a leaf).
  const bool untracked_grad = !autograd_ && n.grad_enabled && !in_backward_ && ArgsRequireGrad(args);
  if (!tracked && n.grad_enabled && NeedsAutograd(args)) {
    if (in_backward_ || WritesArgument(name)) {
      Opaque(name);
    } else {
      for (size_t k = 0; k < args.size(); ++k) {
        if (const auto* t = std::get_if<Tensor>(&args[k]); t && RequiresGrad(*t)) {
          n.local_grads.push_back({static_cast<int>(k), -1});
          grad_inputs.push_back(*t);
        } else if (const auto* ts = std::get_if<std::vector<Tensor>>(&args[k])) {
          for (size_t e = 0; e < ts->size(); ++e)
            if (RequiresGrad((*ts)[e])) {
              n.local_grads.push_back({static_cast<int>(k), static_cast<int>(e)});
              grad_inputs.push_back((*ts)[e]);
            }
        }
      }
    }
  }
  std::vector<Value> meta = args;
  // Meta copies of captured tensors: an op that returns one (an in-place update of a parameter)
  // returns the captured tensor itself to the program.
  std::unordered_map<TensorImpl*, Tensor> captured;
  auto visit = [&](Tensor& arg, Tensor& m, int k, int e) {
    if (!arg.defined()) return;
    if (int s = SlotOf(arg); s >= 0) {
      n.refs.push_back({k, e, s});
      arg = Tensor();  // filled at run time
      return;
    }
    OF_CHECK(arg.device().type != DeviceType::kMeta)
        << "nn.Graph: an input of " << name << " is a tensor the graph did not record (made from a "
        << "lazy tensor by an operation that cannot be traced, or a meta tensor)";
    if (arg.is_wrapped_number()) return;  // Python numbers keep their value
    m = ToMeta(arg);
    captured.emplace(m.impl(), arg);
  };
  for (size_t k = 0; k < args.size(); ++k) {
    if (auto* t = std::get_if<Tensor>(&args[k])) {
      visit(*t, std::get<Tensor>(meta[k]), static_cast<int>(k), -1);
    } else if (auto* ts = std::get_if<std::vector<Tensor>>(&args[k])) {
      auto& ms = std::get<std::vector<Tensor>>(meta[k]);
      for (size_t e = 0; e < ts->size(); ++e) visit((*ts)[e], ms[e], static_cast<int>(k), static_cast<int>(e));
    } else if (auto* d = std::get_if<Device>(&args[k])) {
      if (d->type == DeviceType::kMeta) n.devices.push_back(static_cast<int>(k));
      meta[k] = Device{DeviceType::kMeta, -1};
    } else if (schema && k < schema->params.size() && schema->params[k].type == "Device") {
      meta[k] = Device{DeviceType::kMeta, -1};  // None: the default device when run
    }
  }
  if (!dynamic_slots_.empty()) LinkSizes(n, args);  // (before the dims: its outputs inherit them)
  std::vector<Value> real;  // (value-dependent ops) the arguments' values in the tracing call
  std::vector<Tensor> outs;
  if (value_dependent) {
    real = args;
    outs = CallOnTracingValues(*this, n, real, prog_->device, name);
  } else {
    Suspend suspend;
    AutoGradMode no_grad(false);
    outs = n.Call(meta);
  }
  const int first_new = prog_->num_slots;  // the outputs' new slots start here
  const size_t num_op_outs = outs.size() - grad_inputs.size();
  if (!n.local_grads.empty()) {
    bool differentiable = false, reached = false;
    for (size_t j = 0; j < num_op_outs; ++j) differentiable |= outs[j].defined() && IsDifferentiableType(outs[j].dtype());
    for (size_t j = num_op_outs; j < outs.size(); ++j) reached |= outs[j].defined();
    if (!differentiable || !reached) {  // (no gradient to give: argmax, an op returning its input) a plain node
      n.local_grads.clear();
      outs.resize(num_op_outs);
      grad_inputs.clear();
    }
  }
  // Note [Dynamic shapes]: the dims of each output the values decide -- the op's own (its rule),
  // and those inherited from dynamic inputs.
  std::vector<uint64_t> dims = value_dependent ? DynamicDims(name, real, outs) : std::vector<uint64_t>();
  dims.resize(outs.size(), 0);
  std::vector<int64_t> dynamic_sizes;  // the tracing call's sizes of the inputs' dynamic dims
  std::vector<DimVector> fixed;        // the static tensor inputs' sizes
  for (const SlotRef& r : n.refs) {
    const Tensor& m = prog_->meta[r.slot];
    if (!prog_->Dynamic(r.slot)) {
      if (r.arg >= 0) fixed.push_back(m.sizes());
      continue;
    }
    for (int64_t d = 0; d < m.dim(); ++d)
      if (prog_->dynamic[r.slot] >> d & 1) dynamic_sizes.push_back(m.sizes()[d]);
  }
  if (!dynamic_sizes.empty()) {
    for (const Value& v : args)  // (captured tensors: parameters, constants)
      if (const auto* t = std::get_if<Tensor>(&v); t && t->defined() && !t->is_wrapped_number()) fixed.push_back(t->sizes());
    for (size_t k = 0; k < outs.size(); ++k) dims[k] |= InheritedDims(outs[k], dynamic_sizes, fixed);
  }
  const int index = static_cast<int>(prog_->nodes.size());  // (this node's, once pushed)
  // A view shares its input's storage on the meta device too (the passes keep writes through
  // views in mind: src/graph/passes.cpp).
  for (const Tensor& o : outs) {
    if (!o.defined()) continue;
    for (const Value& v : meta) {
      if (const auto* t = std::get_if<Tensor>(&v); t && t->defined() && t->storage() == o.storage() && t->impl() != o.impl())
        n.aliases = true;
      if (const auto* ts = std::get_if<std::vector<Tensor>>(&v))
        for (const Tensor& t : *ts)
          if (t.defined() && t.storage() == o.storage() && t.impl() != o.impl()) n.aliases = true;
    }
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    Tensor& o = outs[k];
    if (!o.defined()) {
      n.outs.push_back(-1);
      continue;
    }
    if (auto it = captured.find(o.impl()); it != captured.end()) {
      o = it->second;
      n.outs.push_back(-1);
      continue;
    }
    // (by identity: a new view over a slot's storage with its geometry is still a new value)
    auto known = slot_of_.find(o.impl());
    int s = known == slot_of_.end() ? -1 : known->second;
    // An op that made a real tensor anyway (a hand-written node creating one on its own) is
    // still lazy for the rest of the trace: its meta twin stands for it.
    const Tensor value = o;
    if (s < 0 && o.device().type != DeviceType::kMeta) o = ToMeta(o);
    if (s < 0) {
      s = NewSlot(o);
      producer_[s] = index;
      prog_->dynamic[s] = dims[k];
      if (dims[k]) dynamic_slots_.push_back(s);
      if (value_dependent) real_[s] = value;
    }
    n.outs.push_back(s);
  }
  if (untracked_grad) {  // (grad_inputs is empty: autograd is off)
    IntrusivePtr<UntracedGradNode> node(new UntracedGradNode(n.name));
    for (size_t j = 0; j < outs.size(); ++j)  // (lazy outputs only: a captured tensor is real)
      if (n.outs[j] >= 0 && IsDifferentiableType(outs[j].dtype()) && !RequiresGrad(outs[j]))
        SetHistory(outs[j], node.get());
  }
  if (!grad_inputs.empty()) {
    std::vector<Tensor> leaves;  // those the outputs reach: their inputs get a gradient
    std::vector<Edge> edges;
    for (size_t i = 0; i < grad_inputs.size(); ++i)
      if (const Tensor& l = outs[num_op_outs + i]; l.defined()) {
        leaves.push_back(l);
        edges.push_back(GradEdge(grad_inputs[i]));
      }
    outs.resize(num_op_outs);
    IntrusivePtr<LocalGradNode> node(new LocalGradNode(this, n.name, std::move(leaves)));
    node->next_ = std::move(edges);
    for (size_t j = 0; j < num_op_outs; ++j)  // (an output that is an input keeps its history)
      if (outs[j].defined() && n.outs[j] >= first_new && IsDifferentiableType(outs[j].dtype())) {
        SetHistory(outs[j], node.get());
        node->outs_.push_back(outs[j].impl());
      }
  }
  n.args = std::move(args);
  prog_->nodes.push_back(std::move(n));
  return outs;
}

// Note [Dynamic shapes]: an int-list argument equal to the sizes of a value of run-time sizes (the
// node's own input first, else the latest such value) is taken to be those sizes: its dynamic
// dims are read from that value when the node runs (SizeRef). A formula's `input_sizes` of a
// dynamic input is the case: sum's backward expands its gradient to them.
void Tracer::LinkSizes(Node& n, const std::vector<Value>& args) {
  for (size_t k = 0; k < args.size(); ++k) {
    const auto* v = std::get_if<DimVector>(&args[k]);
    if (!v || v->empty()) continue;
    auto same = [&](int c) { return prog_->Dynamic(c) && prog_->meta[c].sizes() == *v; };
    int s = -1;
    for (const SlotRef& r : n.refs)
      if (r.arg >= 0 && same(r.slot)) {
        s = r.slot;
        break;
      }
    for (auto it = dynamic_slots_.rbegin(); s < 0 && it != dynamic_slots_.rend(); ++it)
      if (same(*it)) s = *it;
    if (s < 0) continue;
    const int ref = static_cast<int>(n.refs.size());
    n.refs.push_back({-1, -1, s});
    for (size_t d = 0; d < v->size() && d < 64; ++d)
      if (prog_->dynamic[s] >> d & 1)
        n.size_refs.push_back({static_cast<int>(k), static_cast<int>(d), ref, static_cast<int>(d)});
  }
  // A number computed from those sizes: mean's gradient, `div(expand(grad, sizes), n)` with n the
  // count of elements (or one dim's size) of the value whose sizes the expand read. (SizeRef with
  // elem -1: the argument is that count, or dim `dim`'s size, as a Python number.)
  if (n.name != "div" || args.size() < 2) return;
  const auto* num = std::get_if<Tensor>(&args[1]);
  int x = -1;
  for (const SlotRef& r : n.refs)
    if (r.arg == 0 && r.elem < 0) x = r.slot;
  auto made = producer_.find(x);
  if (!num || !num->defined() || !num->is_wrapped_number() || made == producer_.end() ||
      made->second >= static_cast<int>(prog_->nodes.size()))
    return;
  const Node& expand = prog_->nodes[made->second];
  if (expand.size_refs.empty()) return;
  const int s = expand.refs[expand.size_refs[0].ref].slot;
  const Scalar value = ItemOf(*num);
  if (value.is_complex() || value.ToDouble() != static_cast<double>(value.ToInt())) return;
  const Tensor& m = prog_->meta[s];
  int dim = -2;
  if (value.ToInt() == m.numel()) dim = -1;
  for (int64_t d = 0; dim == -2 && d < m.dim() && d < 64; ++d)
    if (prog_->dynamic[s] >> d & 1 && m.sizes()[d] == value.ToInt()) dim = static_cast<int>(d);
  if (dim == -2) return;
  const int ref = static_cast<int>(n.refs.size());
  n.refs.push_back({-1, -1, s});
  n.size_refs.push_back({1, -1, ref, dim});
}

// ---- the traced backward (Note [Backward nodes]) ----

namespace {

// accumulate_grad_(leaf, grad) (in-place style name: it writes its argument, so the passes keep
// it, Note [Pure nodes]): the leaf's AccumulateGrad when the program runs. At trace time
// (meta inference: a meta leaf) it writes nothing.
std::vector<Tensor> AccumulateGradNode(const std::vector<Value>& a) {
  const Tensor& leaf = std::get<Tensor>(a[0]);
  const Tensor& g = std::get<Tensor>(a[1]);
  if (leaf.device().type == DeviceType::kMeta) return {};
  if (const AutogradMeta* m = GetMeta(leaf); m && m->grad_fn_) {
    // A graph input computed with autograd outside the graph (`g(w * 2)`): its gradient goes on
    // into that history, as eager's backward would take it.
    RunBackward({leaf}, {g}, {}, BackwardOptions{});
    return {};
  }
  // The gradient may become .grad itself when only its slot and this call's arguments hold it
  // (Execution::Run copies a node's arguments): as AccumulateGrad's "no other owner".
  AccumulateLeafGrad(leaf, g, g.impl()->RefCount() <= 2);
  return {};
}

class TracedBackward final : public LazyBackward {
 public:
  explicit TracedBackward(Tracer* tr) : tr_(tr), prev_(CurrentLazyBackward()) { CurrentLazyBackward() = this; }
  ~TracedBackward() { CurrentLazyBackward() = prev_; }
  void Accumulate(const Tensor& leaf, const Tensor& grad) override { tr_->Accumulate(leaf, grad); }

 private:
  Tracer* tr_;
  LazyBackward* prev_;
};

}  // namespace

namespace {
std::unordered_map<std::string, NodeFn>& NodeFns() {
  static auto* fns = new std::unordered_map<std::string, NodeFn>{{"accumulate_grad_", &AccumulateGradNode}};
  return *fns;
}
}  // namespace

void RegisterNodeFn(const std::string& name, NodeFn fn) { NodeFns()[name] = fn; }

NodeFn FindNodeFn(const std::string& name) {
  auto it = NodeFns().find(name);
  return it == NodeFns().end() ? nullptr : it->second;
}

void Tracer::Accumulate(const Tensor& leaf, const Tensor& grad) {
  Record("accumulate_grad_", &AccumulateGradNode, {Value(leaf), Value(grad)}, nullptr, true);
  auto& [g, count] = grads_[leaf.impl()];
  g = grad;
  ++count;
}

Tensor Tracer::TracedGrad(const Tensor& leaf) const {
  auto it = grads_.find(leaf.impl());
  if (it == grads_.end() || it->second.second != 1) return Tensor();
  return it->second.first;
}

void Tracer::ScalarInput(const std::string& param, const Tensor& value) {
  OF_CHECK(!prog_->nodes.empty()) << "nn.Graph: a scalar input needs a recorded node";
  Node& n = prog_->nodes.back();
  int arg = -1;
  if (n.schema)
    for (size_t k = 0; k < n.schema->params.size(); ++k)
      if (n.schema->params[k].name == param) arg = static_cast<int>(k);
  OF_CHECK_VALUE(value.defined() && value.dim() == 0 && value.dtype() == DType::kFloat64 &&
                 value.device().type == DeviceType::kCPU)
      << "nn.Graph: a scalar input of " << n.name << " must be a 0-dim float64 CPU tensor";
  OF_CHECK_VALUE(arg >= 0 && arg < static_cast<int>(n.args.size()) && std::holds_alternative<double>(n.args[arg]))
      << "nn.Graph: " << n.name << " has no float argument '" << param << "'";
  n.scalars.emplace_back(arg, value);
}

bool Tracer::Backward(const Tensor& loss, const Tensor& seed, std::string* why) {
  OF_CHECK(RequiresGrad(loss) || !opaque_.empty() || !autograd_)
      << "element 0 of tensors does not require grad and does not have a grad_fn";
  if (!autograd_) {
    *why = "autograd is off in this trace (global tensors)";
    return false;
  }
  if (!opaque_.empty()) {
    *why = "autograd cannot follow " + opaque_;
    return false;
  }
  const size_t before = prog_->nodes.size();
  try {
    TracedBackward scope(this);
    in_backward_ = true;
    RunBackward({loss}, {seed}, {}, BackwardOptions{});
    in_backward_ = false;
  } catch (const std::exception& e) {
    // A formula that does not record (a helper calling a kernel entry): the backward becomes a
    // Python step; what it recorded so far goes.
    in_backward_ = false;
    prog_->nodes.resize(before);
    *why = e.what();
    return false;
  }
  return true;
}

bool NeedsAutograd(const std::vector<Value>& args) {
  if (!GradMode::is_enabled()) return false;
  if (const Tracer* tr = CurrentTracer(); tr && !tr->autograd()) return false;
  return ArgsRequireGrad(args);
}

std::shared_ptr<Program> Tracer::Finish() {
  End();
  OF_CHECK(prog_) << "nn.Graph: this tracer has already finished";
  prog_->Finalize();
  std::shared_ptr<Program> p = std::move(prog_);
  slot_of_.clear();
  by_storage_.clear();
  lazies_.clear();
  real_.clear();
  producer_.clear();
  return p;
}

// ---- Note [Dynamic shapes] (dynamic_shapes.h) ----

Tensor Tracer::Evaluate(int slot, const std::string& op) {
  const std::string head = "nn.Graph: " + op + "'s output size depends on its input's values, ";
  auto made = producer_.find(slot);
  const bool computed = made != producer_.end() && made->second < static_cast<int>(prog_->nodes.size());
  // Written since it was computed (an in-place op on it or on a view of its storage): the value
  // the tracing call would see is not the one computed here.
  for (size_t i = computed ? made->second + 1 : 0; i < prog_->nodes.size(); ++i) {
    const Node& w = prog_->nodes[i];
    if (!WritesArguments(w)) continue;
    for (const SlotRef& r : w.refs)
      OF_CHECK_KIND(w.barrier >= 0 || prog_->meta[r.slot].storage() != prog_->meta[slot].storage(),
                    ErrorKind::kNotImplemented)
          << head << "and %" << slot << " is written in place by " << w.name << " before it: tracing cannot know them";
  }
  if (auto it = real_.find(slot); it != real_.end()) return it->second;
  OF_CHECK_KIND(computed, ErrorKind::kNotImplemented)
      << head << "and %" << slot << " is computed by a Python step, which tracing does not run";
  const Node& n = prog_->nodes[made->second];
  OF_CHECK_KIND(IsPureNode(n), ErrorKind::kNotImplemented)
      << head << "which come from " << n.name << " (a random draw, an in-place write or a per-run input): tracing "
      << "computes such values only through ops that give the same result every time";
  std::vector<Value> a = n.args;
  const std::vector<Tensor> outs = CallOnTracingValues(*this, n, a, prog_->device, op);
  for (size_t k = 0; k < outs.size() && k < n.outs.size(); ++k)
    if (n.outs[k] >= 0) real_[n.outs[k]] = outs[k];
  auto it = real_.find(slot);
  OF_CHECK(it != real_.end() && it->second.defined()) << head << "and " << n.name << " gave no value for %" << slot;
  return it->second;
}

// ---- Program ----

int Program::Resolve(int slot) const {
  while (slot >= 0 && slot < static_cast<int>(forward.size()) && forward[slot] >= 0) slot = forward[slot];
  return slot;
}

void Program::Finalize() {
  const int kNever = -1;
  std::vector<int> last(num_slots, kNever);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const SlotRef& r : nodes[i].refs) last[r.slot] = static_cast<int>(i);
    for (int s : nodes[i].outs)
      if (s >= 0) last[s] = static_cast<int>(i);
  }
  for (int s : pinned) last[Resolve(s)] = kNever;
  release_after_.assign(nodes.size(), {});
  for (int s = 0; s < num_slots; ++s)
    if (last[s] != kNever) release_after_[last[s]].push_back(s);
}

Program::Execution::Execution(std::shared_ptr<const Program> p, std::vector<Tensor> inputs)
    : p_(std::move(p)), slots_(p_->num_slots) {
  OF_CHECK_VALUE(inputs.size() == p_->inputs.size())
      << "nn.Graph: the graph takes " << p_->inputs.size() << " tensors, got " << inputs.size();
  for (size_t i = 0; i < inputs.size(); ++i) slots_[p_->inputs[i]] = std::move(inputs[i]);
  for (const auto& [s, t] : p_->consts) slots_[s] = t;
}

const Tensor& Program::Execution::Slot(int s) const {
  s = p_->Resolve(s);
  OF_CHECK(s >= 0 && s < static_cast<int>(slots_.size()) && slots_[s].defined())
      << "nn.Graph: no value for slot " << s;
  return slots_[s];
}

void Program::Execution::SetSlot(int s, Tensor t) {
  OF_CHECK(s >= 0 && s < static_cast<int>(slots_.size())) << "nn.Graph: no slot " << s;
  slots_[s] = std::move(t);
}

void Program::Execution::Release(size_t node) {
  for (int s : p_->release_after_[node]) slots_[s] = Tensor();
}

int Program::Execution::Run() {
  const bool grad = GradMode::is_enabled();
  // One arena per run (memory_plan.h): values placed in an earlier run's keep it alive. Not when
  // nodes run with grad (autograd may keep any value for a Python backward step).
  const ArenaPlan* plan = grad && p_->run_grad ? nullptr : p_->arena.get();
  IntrusivePtr<Storage> arena;
  if (plan && plan->bytes > 0) arena = Storage::Allocate(plan->bytes, Device{DeviceType::kCPU, -1});
  if (after_barrier_ >= 0) {
    const Node& b = p_->nodes[after_barrier_];
    for (int s : b.outs)
      OF_CHECK(slots_[s].defined()) << "nn.Graph: the Python step " << b.barrier << " did not produce slot " << s;
    Release(after_barrier_);
    after_barrier_ = -1;
  }
  while (next_ < p_->nodes.size()) {
    const size_t i = next_++;
    const Node& n = p_->nodes[i];
    if (n.barrier >= 0) {
      after_barrier_ = static_cast<int>(i);
      return n.barrier;
    }
    std::vector<Value> a = n.args;
    for (const SlotRef& r : n.refs) {
      const Tensor& t = slots_[r.slot];
      if (r.arg < 0) continue;  // (Note [Dynamic shapes]: read for its sizes, below)
      if (r.elem < 0) a[r.arg] = t;
      else std::get<std::vector<Tensor>>(a[r.arg])[r.elem] = t;
    }
    for (const SizeRef& z : n.size_refs) [[unlikely]] {
      const Tensor& v = slots_[n.refs[z.ref].slot];
      if (z.elem >= 0) {
        std::get<DimVector>(a[z.arg])[z.elem] = v.sizes()[z.dim];
      } else {  // a number: v's count of elements or one dim's size, in the traced number's kind
        const int64_t count = z.dim < 0 ? v.numel() : v.sizes()[z.dim];
        const bool real = IsFloating(std::get<Tensor>(a[z.arg]).dtype());
        a[z.arg] = WrappedNumber(real ? Scalar(static_cast<double>(count)) : Scalar(count));
      }
    }
    for (int k : n.devices) a[k] = p_->device;
    for (const auto& [k, t] : n.scalars) a[k].emplace<double>(*t.data<double>());  // Note [Scalar inputs]
    std::vector<Tensor> outs;
    {
      AutoGradMode mode(grad && n.grad_enabled && p_->run_grad);
      std::optional<autocast::ExcludeGuard> no_autocast;
      if (n.backward) [[unlikely]] no_autocast.emplace();  // as the eager engine runs formulas
      outs = CallNode(*p_, i, a, plan, arena.get());
    }
    OF_CHECK(outs.size() == n.outs.size())
        << "nn.Graph: " << n.name << " gave " << outs.size() << " outputs when run, " << n.outs.size()
        << " when traced";
    for (size_t k = 0; k < outs.size(); ++k)
      if (n.outs[k] >= 0) slots_[n.outs[k]] = std::move(outs[k]);
    Release(i);
  }
  return -1;
}

std::vector<Tensor> RecordOp(Tracer* tr, const char* op, std::vector<Value> args, bool tracked) {
  const OpSchema& s = SchemaFor(op);
  return tr->Record(op, s.call, std::move(args), &s, tracked);
}

}  // namespace oneflow::lazy
