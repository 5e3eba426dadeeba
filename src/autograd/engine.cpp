#include "autograd/engine.h"

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "autograd/anomaly_mode.h"
#include "autograd/autocast.h"
#include "autograd/formulas.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/saved_hooks.h"
#include "core/error.h"
#include "core/profiler.h"
#include "ops/copy.h"
#include "decl/add.h"
#include "decl/any.h"
#include "decl/cast.h"
#include "decl/empty.h"
#include "decl/isnan.h"
#include "decl/ones_like.h"
#include "decl/zeros.h"

namespace oneflow {

namespace {

// Anomaly mode: the first gradient output of n holding a NaN raises, naming n (PyTorch's
// message). One reduction and a host read per output: debugging only.
void CheckAnomaly(const Node& n, const std::vector<Tensor>& outs) {
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].defined() || outs[k].numel() == 0) continue;
    const Tensor flag = OnHost(Any(Isnan(outs[k]), std::nullopt, false));
    OF_CHECK(!flag.data<bool>()[0]) << "Function '" << n.name() << "' returned nan values in its " << k
                                    << "th output.";
  }
}

struct Task {
  int deps = 0;
  bool exec = true;    // Apply runs (false: only captured, or not on a path to an input)
  bool queued = false;
  std::vector<Tensor> buf;  // incoming gradient per forward output of the node
  std::vector<size_t> captures;       // autograd.grad: result slots fed by this node...
  std::vector<uint32_t> capture_nr;   // ...from these output numbers
};

struct BySeq {
  bool operator()(Node* a, Node* b) const { return a->seq_nr_ < b->seq_nr_; }  // newest first
};

// Casts/sums a gradient to the shape and dtype the receiving node recorded (PyTorch does the
// same in validate_outputs: formulas may return a broadcast-shaped gradient).
Tensor FitGrad(Tensor g, const OutputMeta& m, const Node& from, size_t k) {
  if (g.sizes() != m.sizes) {
    bool ok = g.dim() >= static_cast<int>(m.sizes.size());
    const int lead = g.dim() - m.sizes.size();
    for (size_t d = 0; ok && d < m.sizes.size(); ++d)
      ok = m.sizes[d] == g.sizes()[lead + d] || m.sizes[d] == 1;
    OF_CHECK(ok) << "Function " << from.name() << " returned an invalid gradient at index " << k << " - got "
                 << ShapeStr(g.sizes()) << " but expected shape compatible with " << ShapeStr(m.sizes);
    g = functional::SumTo(g, m.sizes);
  }
  if (g.dtype() != m.dtype) g = functional::Cast(g, m.dtype);
  // (a traced backward's gradients are lazy, on the meta device, whatever the leaf's device)
  if (!(g.device() == m.device) && !CurrentLazyBackward()) {  // x.to("cuda"): the gradient goes back to x's device
    Tensor moved = Empty(g.sizes(), g.dtype(), m.device);
    functional::CopyFrom_(moved, g);
    g = moved;
  }
  return g;
}

void AccumulateInto(Tensor& slot, Tensor g) {
  if (!slot.defined()) slot = std::move(g);
  else if (GradMode::is_enabled() || CurrentLazyBackward()) slot = functional::Add(slot, g, Scalar(1));
  else slot = Add(slot, g, Scalar(1));
}

void RunPreHooks(Node* n, std::vector<Tensor>& grads) {
  if (n->pre_hooks_.empty()) return;
  // User hooks first (in registration order, each may replace the gradient), then retain_grad.
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& h : n->pre_hooks_) {
      if ((h.retain_owner != nullptr) != (pass == 1)) continue;
      Tensor& g = grads[h.output_nr];
      if (!g.defined()) continue;
      Tensor r = h.fn(g);
      if (r.defined()) g = r;
    }
  }
}

}  // namespace

LazyBackward*& CurrentLazyBackward() {
  static thread_local LazyBackward* current = nullptr;
  return current;
}

std::vector<Tensor> RunBackward(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads,
                                const std::vector<Tensor>& inputs, const BackwardOptions& opt) {
  OpScope scope("backward");
  // Seed gradients of the roots.
  std::vector<Edge> root_edges;
  std::vector<Tensor> seeds;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    // Note [Upstream's words] (src/autograd/meta.cpp); upstream's text carries its exception's type after a line break.
    OF_CHECK(RequiresGrad(r)) << "element " << i << " of tensors does not require grad and does not have a grad_fn"
                              << " [OneFlow:\nRuntimeError: element " << i
                              << " of tensors does not require grad and does not have a grad_fn]";
    Tensor g = i < root_grads.size() ? root_grads[i] : Tensor();
    if (!g.defined()) {
      OF_CHECK(r.numel() == 1) << "grad can be implicitly created only for scalar outputs";
      OF_CHECK(!IsComplex(r.dtype())) << "grad can be implicitly created only for real scalar outputs";
      g = OnesLike(r, std::nullopt, std::nullopt, false);
    } else {
      OF_CHECK(g.sizes() == r.sizes()) << "Mismatch in shape: grad_output[" << i << "] has a shape of "
                                       << ShapeStr(g.sizes()) << " and output[" << i << "] has a shape of "
                                       << ShapeStr(r.sizes()) << ".";
    }
    root_edges.push_back(GradEdge(r));
    seeds.push_back(g);
  }
  std::vector<Edge> input_edges;
  for (const Tensor& t : inputs) {
    OF_CHECK(RequiresGrad(t)) << "One of the differentiated Tensors does not require grad";
    input_edges.push_back(GradEdge(t));
  }
  return RunBackwardEdges(root_edges, seeds, input_edges, opt);
}

std::vector<Tensor> RunBackwardEdges(const std::vector<Edge>& root_edges, const std::vector<Tensor>& seeds,
                                     const std::vector<Edge>& inputs, const BackwardOptions& opt) {
  OpScope scope("backward");
  AutoGradMode mode(opt.create_graph);
  // Backward ops run in the dtypes autocast gave their forward ops (PyTorch's documented
  // behaviour), also when backward() is called inside an autocast region.
  autocast::ExcludeGuard no_autocast;
  // Discover the graph and count, for every node, the edges that lead into it.
  std::unordered_map<Node*, Task> tasks;
  std::vector<Node*> stack;
  for (const Edge& e : root_edges)
    if (tasks.emplace(e.fn.get(), Task()).second) stack.push_back(e.fn.get());
  std::vector<Node*> order;  // discovery order (for the reachability pass)
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (const Edge& e : n->next_) {
      if (!e.valid()) continue;
      auto [it, fresh] = tasks.emplace(e.fn.get(), Task());
      it->second.deps++;
      if (fresh) stack.push_back(e.fn.get());
    }
  }
  for (auto& [n, t] : tasks) t.buf.resize(n->outputs_.size());
  // autograd.grad: capture the gradients flowing into the inputs' edges, and run only the nodes
  // on a path to one of them.
  std::vector<Tensor> captured(inputs.size());
  const bool capture_mode = !inputs.empty();
  if (capture_mode) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Edge& e = inputs[i];
      auto it = tasks.find(e.fn.get());
      if (it == tasks.end()) continue;
      it->second.captures.push_back(i);
      it->second.capture_nr.push_back(e.input_nr);
    }
    // needed(n): n is captured or leads to a captured node. Children come after parents in a
    // topological order, so walk one backwards.
    std::unordered_map<Node*, int> indeg;
    for (auto& [n, t] : tasks) indeg[n] = t.deps;
    std::vector<Node*> topo, ready;
    for (auto& [n, d] : indeg) if (d == 0) ready.push_back(n);
    while (!ready.empty()) {
      Node* n = ready.back();
      ready.pop_back();
      topo.push_back(n);
      for (const Edge& e : n->next_)
        if (e.valid() && --indeg[e.fn.get()] == 0) ready.push_back(e.fn.get());
    }
    std::unordered_map<Node*, bool> needed;
    for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
      Node* n = *it;
      bool child = false;
      for (const Edge& e : n->next_) child |= e.valid() && needed[e.fn.get()];
      Task& t = tasks[n];
      t.exec = child;
      needed[n] = child || !t.captures.empty();
    }
  }
  // Run, newest node first among the ready ones (PyTorch's order for one device).
  std::priority_queue<Node*, std::vector<Node*>, BySeq> ready;
  for (size_t i = 0; i < root_edges.size(); ++i) {
    Task& t = tasks[root_edges[i].fn.get()];
    AccumulateInto(t.buf[root_edges[i].input_nr],
                   FitGrad(seeds[i], root_edges[i].fn->outputs_[root_edges[i].input_nr], *root_edges[i].fn, i));
  }
  for (const Edge& e : root_edges) {
    Task& t = tasks[e.fn.get()];
    if (t.deps == 0 && !t.queued) {
      t.queued = true;
      ready.push(e.fn.get());
    }
  }
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    Task& t = tasks[n];
    std::vector<Tensor> grads = std::move(t.buf);
    RunPreHooks(n, grads);
    for (size_t c = 0; c < t.captures.size(); ++c) {
      Tensor& slot = captured[t.captures[c]];
      const Tensor& g = grads[t.capture_nr[c]];
      if (g.defined()) AccumulateInto(slot, g);
    }
    if (!t.exec) continue;
    for (size_t h = 0; h < n->node_pre_hooks_.size(); ++h)  // (by index: a hook may add hooks)
      if (auto r = n->node_pre_hooks_[h].fn(grads)) grads = std::move(*r);
    bool any = false;
    for (const Tensor& g : grads) any |= g.defined();
    std::vector<Tensor> outs;
    if (any) {
      // (functional::Zeros: inside an nn.Graph's traced backward the zeros are a node of the
      // program, not a meta tensor the trace cannot find)
      if (n->MaterializeGrads())
        for (size_t k = 0; k < grads.size(); ++k)
          if (!grads[k].defined())
            grads[k] = functional::Zeros(n->outputs_[k].sizes, n->outputs_[k].dtype, n->outputs_[k].device, false);
      // Note [Op profiler]: each node is an event inside the `backward` op's.
      const int64_t t0 = profiler::g_enabled.load(std::memory_order_relaxed) ? profiler::NowNs() : 0;
      {
        UnpackScope unpack_scope;  // Note [Saved tensor hooks]: one unpack per saved tensor
        outs = n->Apply(grads);
      }
      if (t0) profiler::Record(profiler::Intern(n->name()), t0, profiler::NowNs());
      for (size_t h = 0; h < n->post_hooks_.size(); ++h)
        if (auto r = n->post_hooks_[h].fn(outs, grads)) outs = std::move(*r);
      if (AnomalyMode::enabled() && AnomalyMode::check_nan()) CheckAnomaly(*n, outs);
    }
    if (!opt.keep_graph) n->ReleaseSaved();
    for (size_t k = 0; k < n->next_.size(); ++k) {
      const Edge& e = n->next_[k];
      if (!e.valid()) continue;
      auto it = tasks.find(e.fn.get());
      Task& child = it->second;
      if (k < outs.size() && outs[k].defined())
        AccumulateInto(child.buf[e.input_nr], FitGrad(outs[k], e.fn->outputs_[e.input_nr], *n, k));
      if (--child.deps == 0 && !child.queued) {
        child.queued = true;
        ready.push(e.fn.get());
      }
    }
  }
  if (capture_mode && !opt.allow_unused)
    for (const Tensor& c : captured)
      OF_CHECK(c.defined()) << "One of the differentiated Tensors appears to not have been used in the graph. "
                               "Set allow_unused=True if this is the desired behavior.";
  return captured;
}

}  // namespace oneflow
