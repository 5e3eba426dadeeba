// Python face of autograd: Tensor.grad/grad_fn/is_leaf/requires_grad/hooks/detach, the engine
// entry points behind Tensor.backward and flow.autograd.grad, grad mode, and the node type behind
// flow.autograd.Function (python/oneflow/autograd/).
#include <atomic>
#include <sstream>

#include "api/bind_registry.h"
#include "api/convert.h"
#include "autograd/anomaly_mode.h"
#include "autograd/engine.h"
#include "autograd/functional.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/special_nodes.h"
#include "core/error.h"
#include "graph/lazy.h"
#include "graph/serialize.h"
#include "decl/add.h"
#include "decl/clone.h"
#include "decl/contiguous.h"
#include "decl/ones_like.h"

namespace oneflow {

namespace {

// Tensor.detach() / .data: a graph node while nn.Graph traces (src/graph/lazy.h).
std::vector<Tensor> DetachNode(const std::vector<Value>& a) { return {functional::Detach(TensorValue(a[0]))}; }
Tensor DetachOrTrace(const Tensor& t) {
  // (tracked: its output has no gradient, which autograd knows)
  if (auto* tr = lazy::Active()) [[unlikely]] return tr->Record("detach", &DetachNode, {t}, nullptr, true)[0];
  return functional::Detach(t);
}

// A grad_fn as seen from Python: a handle on a Node.
struct PyNode {
  IntrusivePtr<Node> node;
};

nb::object WrapNode(const IntrusivePtr<Node>& n) {
  if (!n) return nb::none();
  return nb::cast(PyNode{n});
}

std::atomic<int64_t> g_next_hook_id{1};

// A Python hook held by a leaf's AutogradMeta: a named type, so that the garbage collector's
// traversal can find its function (Note [Hooks and the garbage collector]).
struct PyLeafHook {
  nb::object fn;
  bool post_accumulate;  // register_post_accumulate_grad_hook's: must return None
  Tensor operator()(const Tensor& t) const {
    nb::object r = fn(Wrap(t));
    if (post_accumulate) {
      OF_CHECK(r.is_none()) << "post accumulate grad hooks should return None, got "
                            << nb::str(r.type().attr("__name__")).c_str();
      return Tensor();
    }
    return r.is_none() ? Tensor() : ToTensor(r);
  }
};

// A Python hook of a non-leaf tensor, held by its grad_fn's pre-hooks (named for the same reason).
struct PyHook {
  nb::object fn;
  Tensor operator()(const Tensor& g) const {
    nb::object r = fn(Wrap(g));
    if (r.is_none()) return Tensor();
    return ToTensor(r);
  }
};

GradHook PythonHook(nb::object fn) { return PyHook{std::move(fn)}; }

std::vector<Tensor> OptionalTensorList(nb::handle seq) {
  std::vector<Tensor> v;
  for (nb::handle h : nb::borrow<nb::sequence>(seq)) v.push_back(h.is_none() ? Tensor() : ToTensor(h));
  return v;
}

nb::tuple OptionalTensorTuple(const std::vector<Tensor>& v) {
  nb::list l;
  for (const Tensor& t : v) l.append(t.defined() ? Wrap(t) : nb::none());
  return nb::tuple(l);
}

// A hook's replacement gradients: None keeps them; else as many values (tensors or None).
std::optional<std::vector<Tensor>> HookResult(nb::handle r, const nb::handle fn, size_t expected) {
  if (r.is_none()) return std::nullopt;
  OF_CHECK_TYPE(nb::isinstance<nb::sequence>(r)) << "hook '" << nb::str(nb::getattr(fn, "__name__", nb::str("?"))).c_str()
                                                 << "' should return None or a tuple of gradients";
  std::vector<Tensor> v = OptionalTensorList(r);
  OF_CHECK(v.size() == expected) << "hook '" << nb::str(nb::getattr(fn, "__name__", nb::str("?"))).c_str()
                                 << "' has returned an incorrect number of values (got " << v.size()
                                 << ", but expected " << expected << ")";
  return v;
}

// Note [Node hooks] from Python (named types, for the garbage collector's traversal).
struct PyNodePreHook {
  nb::object fn;
  std::optional<std::vector<Tensor>> operator()(const std::vector<Tensor>& consumed) const {
    return HookResult(fn(OptionalTensorTuple(consumed)), fn, consumed.size());
  }
};
struct PyNodePostHook {
  nb::object fn;
  std::optional<std::vector<Tensor>> operator()(const std::vector<Tensor>& produced,
                                                const std::vector<Tensor>& consumed) const {
    auto r = HookResult(fn(OptionalTensorTuple(produced), OptionalTensorTuple(consumed)), fn, produced.size());
    if (r)  // (an input without a gradient has no edge to carry one)
      for (size_t k = 0; k < produced.size(); ++k)
        OF_CHECK(produced[k].defined() || !(*r)[k].defined()) << "can't replace a None gradient with a non-None value";
    return r;
  }
};

// Backward of flow.autograd.Function: calls the Python `backward` with one gradient per output
// and expects one gradient (or None) per input of `apply`.
struct PyFunctionNode final : Node {
  std::string name_;
  nb::object backward_;
  // ctx.save_for_backward tensors live here, not on the Python ctx: an output saved on the ctx
  // would make output -> node -> backward closure -> ctx -> output, a cycle Python can't see.
  std::vector<SavedVariable> saved_;
  const char* name() const override { return name_.c_str(); }
  bool MaterializeGrads() const override { return true; }
  std::vector<Tensor> Apply(std::vector<Tensor>& grads) override {
    nb::list args;
    for (const Tensor& g : grads) args.append(Wrap(g));
    nb::list saved;
    for (const SavedVariable& v : saved_) saved.append(Wrap(v.Unpack(this)));
    OF_CHECK(!backward_.is_none()) << "function " << name_ << ": its backward was released by the garbage collector";
    nb::object r = backward_(nb::tuple(args), nb::tuple(saved));
    std::vector<Tensor> out;
    if (!nb::isinstance<nb::tuple>(r) && !nb::isinstance<nb::list>(r)) r = nb::make_tuple(r);
    nb::sequence seq = nb::borrow<nb::sequence>(r);
    const size_t n = nb::len(seq);
    OF_CHECK(n == next_.size()) << "function " << name_ << " returned an incorrect number of gradients (expected "
                                << next_.size() << ", got " << n << ")";
    for (nb::handle h : seq) out.push_back(h.is_none() ? Tensor() : ToTensor(h));
    return out;
  }
  void ReleaseSaved() override {
    for (SavedVariable& v : saved_) v.Reset();
  }
};

void SetRequiresGrad(const Tensor& t, bool v) {
  if (!IsLeaf(t)) {
    OF_CHECK(v) << "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                   "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().";
    return;
  }
  OF_CHECK(!v || IsDifferentiableType(t.dtype())) << "only Tensors of floating point dtype can require gradients";
  t.impl()->requires_grad_ = v;
}

IntrusivePtr<Node> GradFnOf(const Tensor& t) {
  if (!RequiresGrad(t)) return {};
  Edge e = GradEdge(t);  // regenerates a stale view's grad_fn
  if (dynamic_cast<AccumulateGrad*>(e.fn.get())) return {};
  return e.fn;
}

}  // namespace

// Note [Hooks and the garbage collector]: a hook on a leaf that refers back to the leaf (a
// module's hook on its own parameter, DDP-style bookkeeping) makes a cycle through the C++ hook
// list, which Python's collector cannot see: the objects would never be freed (and nanobind
// reports them as leaked at exit). So the Tensor type's traversal also visits the functions of
// its leaf hooks, and its clear drops them, when the wrapper is the C++ tensor's only owner (no
// graph or other tensor holds it: then the hooks are reachable through this object alone). The
// rest is nanobind's own traversal of a dynamic-attribute instance (its __dict__ and its type).
// The same holds for a non-leaf tensor's Python objects in its grad_fn -- the hooks registered on
// it (a module's full backward hook keeps one), an autograd.Function's backward closure (which
// refers to the Function class, whose methods' globals may hold the output) -- when this wrapper
// is the only owner of the tensor and the tensor the only owner of the node.
Node* SoleNode(const PyTensor* t) {
  if (!t->defined() || t->impl()->RefCount() != 1 || !t->impl()->autograd_meta_) return nullptr;
  Node* n = t->impl()->autograd_meta_->grad_fn_.get();
  return n && n->RefCount() == 1 ? n : nullptr;
}

int TensorGcTraverse(PyObject* self, visitproc visit, void* arg) {
  if (nb::inst_ready(self)) {
    const PyTensor* t = nb::inst_ptr<PyTensor>(self);
    if (t->defined() && t->impl()->RefCount() == 1 && t->impl()->autograd_meta_) {
      for (const auto& h : t->impl()->autograd_meta_->leaf_hooks_)
        if (const PyLeafHook* p = h.second.target<PyLeafHook>()) Py_VISIT(p->fn.ptr());
    }
    if (Node* n = SoleNode(t)) {
      for (const Node::PreHook& h : n->pre_hooks_)
        if (const PyHook* p = h.fn.target<PyHook>()) Py_VISIT(p->fn.ptr());
      for (const Node::NodePreHook& h : n->node_pre_hooks_)
        if (const PyNodePreHook* p = h.fn.target<PyNodePreHook>()) Py_VISIT(p->fn.ptr());
      for (const Node::NodePostHook& h : n->post_hooks_)
        if (const PyNodePostHook* p = h.fn.target<PyNodePostHook>()) Py_VISIT(p->fn.ptr());
      if (auto* f = dynamic_cast<PyFunctionNode*>(n)) Py_VISIT(f->backward_.ptr());
    }
  }
  PyTypeObject* tp = Py_TYPE(self);
  if (tp->tp_dictoffset > 0) Py_VISIT(*reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + tp->tp_dictoffset));
  Py_VISIT(tp);
  return 0;
}

int TensorGcClear(PyObject* self) {
  if (nb::inst_ready(self)) {
    PyTensor* t = nb::inst_ptr<PyTensor>(self);
    if (Node* n = SoleNode(t)) {
      auto& ph = n->pre_hooks_;
      ph.erase(std::remove_if(ph.begin(), ph.end(), [](const Node::PreHook& h) { return h.fn.target<PyHook>(); }),
               ph.end());
      n->node_pre_hooks_.clear();  // (all of them are Python's)
      n->post_hooks_.clear();
      if (auto* f = dynamic_cast<PyFunctionNode*>(n)) f->backward_ = nb::none();
    }
    if (t->defined() && t->impl()->RefCount() == 1 && t->impl()->autograd_meta_) {
      auto& hooks = t->impl()->autograd_meta_->leaf_hooks_;
      hooks.erase(std::remove_if(hooks.begin(), hooks.end(),
                                 [](const auto& h) { return h.second.template target<PyLeafHook>() != nullptr; }),
                  hooks.end());
    }
  }
  PyTypeObject* tp = Py_TYPE(self);
  if (tp->tp_dictoffset > 0) Py_CLEAR(*reinterpret_cast<PyObject**>(reinterpret_cast<char*>(self) + tp->tp_dictoffset));
  return 0;
}

void BindAutograd(nb::module_& m, nb::class_<PyTensor>& cls) {
  lazy::RegisterNodeFn("detach", &DetachNode);  // (a saved graph program's node: src/graph/serialize.h)
  nb::class_<PyNode>(m, "Node")
      .def("name", [](const PyNode& n) { return std::string(n.node->name()); })
      .def("__repr__", [](const PyNode& n) {
        std::ostringstream os;
        os << "<" << n.node->name() << " object at " << n.node.get() << ">";
        return os.str();
      })
      .def_prop_ro("next_functions", [](const PyNode& n) {
        nb::list l;
        for (const Edge& e : n.node->next_) l.append(nb::make_tuple(WrapNode(e.fn), e.input_nr));
        return nb::tuple(l);
      })
      .def_prop_ro("variable", [](const PyNode& n) -> nb::object {
        auto* a = dynamic_cast<AccumulateGrad*>(n.node.get());
        return a ? Wrap(a->variable()) : nb::none();
      })
      .def("_register_prehook", [](const PyNode& n, nb::object fn) {
        const int64_t id = g_next_hook_id++;
        n.node->node_pre_hooks_.push_back({id, PyNodePreHook{std::move(fn)}});
        return id;
      })
      .def("_register_hook", [](const PyNode& n, nb::object fn) {
        const int64_t id = g_next_hook_id++;
        n.node->post_hooks_.push_back({id, PyNodePostHook{std::move(fn)}});
        return id;
      })
      .def("_remove_hook", [](const PyNode& n, int64_t id) {
        auto& pre = n.node->node_pre_hooks_;
        pre.erase(std::remove_if(pre.begin(), pre.end(), [&](const auto& h) { return h.id == id; }), pre.end());
        auto& post = n.node->post_hooks_;
        post.erase(std::remove_if(post.begin(), post.end(), [&](const auto& h) { return h.id == id; }), post.end());
      })
      .def("__eq__", [](const PyNode& a, nb::handle b) {
        return nb::isinstance<PyNode>(b) && nb::cast<const PyNode&>(b).node.get() == a.node.get();
      })
      .def("__hash__", [](const PyNode& n) { return reinterpret_cast<intptr_t>(n.node.get()); });

  cls.def_prop_rw("requires_grad", [](const PyTensor& t) { return RequiresGrad(t); },
                  [](PyTensor& t, bool v) { SetRequiresGrad(t, v); })
      .def("requires_grad_", [](nb::handle self, bool v) {
        SetRequiresGrad(ToTensor(self), v);
        return nb::borrow(self);
      }, "requires_grad"_a = true)
      .def_prop_ro("is_leaf", [](const PyTensor& t) { return IsLeaf(t); })
      .def_prop_ro("grad_fn", [](const PyTensor& t) { return WrapNode(GradFnOf(t)); })
      .def_prop_rw("grad", [](const PyTensor& t) -> nb::object {
        AutogradMeta* m = GetMeta(t);
        return m ? Wrap(m->grad_) : nb::none();
      }, [](PyTensor& t, nb::handle g) {
        if (g.is_none()) {
          if (GetMeta(t)) MutableMeta(t).grad_ = Tensor();
          return;
        }
        const Tensor& v = ToTensor(g);
        OF_CHECK(v.sizes() == t.sizes()) << "attempting to assign a gradient of size '" << ShapeStr(v.sizes())
                                         << "' to a tensor of size '" << ShapeStr(t.sizes())
                                         << "'. Please ensure that the gradient and the tensor are the same size";
        OF_CHECK(v.dtype() == t.dtype()) << "attempting to assign a gradient with dtype '" << DTypeName(v.dtype())
                                         << "' to a tensor with dtype '" << DTypeName(t.dtype())
                                         << "'. Please ensure that the gradient and the tensor have the same dtype";
        MutableMeta(t).grad_ = v;
      }, nb::arg("grad").none())
      .def_prop_ro("retains_grad", [](const PyTensor& t) {
        AutogradMeta* m = GetMeta(t);
        return m && m->retains_grad_;
      })
      .def("retain_grad", [](const PyTensor& t) {
        OF_CHECK(RequiresGrad(t)) << "can't retain_grad on Tensor that has requires_grad=False";
        if (IsLeaf(t)) return;
        AutogradMeta& m = MutableMeta(t);
        if (m.retains_grad_) return;
        Edge e = GradEdge(t);
        TensorImpl* owner = t.impl();
        m.retains_grad_ = true;
        e.fn->pre_hooks_.push_back(Node::PreHook{e.input_nr, 0, [owner](const Tensor& g) {
          AutogradMeta& mm = *owner->autograd_meta_;
          if (!mm.grad_.defined()) mm.grad_ = GradMode::is_enabled() ? g : Clone(g);
          else mm.grad_ = GradMode::is_enabled() ? functional::Add(mm.grad_, g, Scalar(1)) : Add(mm.grad_, g, Scalar(1));
          return Tensor();
        }, owner});
      })
      .def("_register_hook", [](const PyTensor& t, nb::object fn) {
        OF_CHECK(RequiresGrad(t)) << "cannot register a hook on a tensor that doesn't require gradient";
        const int64_t id = g_next_hook_id++;
        if (IsLeaf(t)) {
          MutableMeta(t).leaf_hooks_.emplace_back(id, PyLeafHook{fn, false});
        } else {
          Edge e = GradEdge(t);
          e.fn->pre_hooks_.push_back(Node::PreHook{e.input_nr, id, PythonHook(fn), nullptr});
        }
        return id;
      })
      .def("_register_post_accumulate_grad_hook", [](const PyTensor& t, nb::object fn) {
        // Note [Post-accumulate hooks] (autograd/special_nodes.cpp): a negative id marks them.
        OF_CHECK(RequiresGrad(t)) << "cannot register a hook on a tensor that doesn't require gradient";
        OF_CHECK(IsLeaf(t)) << "post accumulate grad hooks cannot be registered on non-leaf tensors";
        const int64_t id = -(g_next_hook_id++);
        MutableMeta(t).leaf_hooks_.emplace_back(id, PyLeafHook{fn, true});
        return id;
      })
      .def("_remove_hook", [](const PyTensor& t, int64_t id) {
        AutogradMeta* m = GetMeta(t);
        if (!m) return;
        auto& lh = m->leaf_hooks_;
        lh.erase(std::remove_if(lh.begin(), lh.end(), [&](auto& p) { return p.first == id; }), lh.end());
        if (m->grad_fn_) {
          auto& ph = m->grad_fn_->pre_hooks_;
          ph.erase(std::remove_if(ph.begin(), ph.end(), [&](auto& p) { return p.id == id && !p.retain_owner; }),
                   ph.end());
        }
      })
      .def("_increment_version", [](PyTensor& t) { t.BumpVersion(); })
      .def("detach", [](const PyTensor& t) { return Wrap(DetachOrTrace(t)); })
      .def("detach_", [](nb::handle self) {
        const Tensor& t = ToTensor(self);
        // Any view, as PyTorch: its base and the other views share the history it would drop
        OF_CHECK(!t.impl()->view_base_) << "detach_: Can't detach views in-place. Use detach() instead.";
        if (AutogradMeta* m = GetMeta(t)) m->grad_fn_.Reset();
        t.impl()->requires_grad_ = false;
        return nb::borrow(self);
      })
      // upstream OneFlow's Tensor.contiguous_: the tensor itself made contiguous. A
      // non-contiguous one gets a contiguous copy of its values as its own memory (so it stops
      // sharing memory with the tensor it viewed, as upstream's) and keeps its autograd
      // identity: the values are the same, so is their gradient.
      .def("contiguous_", [](nb::handle self) {
        TensorImpl* i = ToTensor(self).impl();
        if (i->is_contiguous_) return nb::borrow(self);
        const Tensor c = Contiguous(ToTensor(self));  // the kernel entry: records no node
        i->storage_ = c.impl()->storage_;
        i->offset_ = c.impl()->offset_;
        i->strides_ = c.impl()->strides_;
        i->RefreshContiguity();
        i->view_base_.Reset();
        return nb::borrow(self);
      })
      .def_prop_rw("data", [](const PyTensor& t) { return Wrap(DetachOrTrace(t)); },
                   [](PyTensor& t, const PyTensor& src) {
                     // Replaces the values and layout, keeping this tensor's autograd identity.
                     TensorImpl* i = t.impl();
                     const TensorImpl* s = src.impl();
                     i->storage_ = s->storage_;
                     i->offset_ = s->offset_;
                     i->sizes_ = s->sizes_;
                     i->strides_ = s->strides_;
                     i->dtype_ = s->dtype_;
                     i->RefreshContiguity();
                   });

  m.def("is_grad_enabled", [] { return GradMode::is_enabled(); });
  m.def("_set_anomaly_enabled", [](bool on, bool check_nan) { AnomalyMode::set(on, check_nan); });
  m.def("_is_anomaly_enabled", [] { return AnomalyMode::enabled(); });
  m.def("_is_anomaly_check_nan_enabled", [] { return AnomalyMode::check_nan(); });
  m.def("_set_grad_enabled", [](bool on) { GradMode::set_enabled(on); });
  m.def("_run_backward", [](nb::handle tensors, nb::handle grads, bool keep_graph, bool create_graph) {
    BackwardOptions opt;
    opt.keep_graph = keep_graph;
    opt.create_graph = create_graph;
    RunBackward(ToTensorList(tensors), OptionalTensorList(grads), {}, opt);
  });
  m.def("_run_grad", [](nb::handle outputs, nb::handle inputs, nb::handle grads, bool keep_graph,
                        bool create_graph, bool allow_unused) {
    BackwardOptions opt;
    opt.keep_graph = keep_graph;
    opt.create_graph = create_graph;
    opt.allow_unused = allow_unused;
    std::vector<Tensor> in = ToTensorList(inputs);
    std::vector<Tensor> r = RunBackward(ToTensorList(outputs), OptionalTensorList(grads), in, opt);
    nb::list l;
    for (Tensor& t : r) {
      // Without create_graph the results are plain tensors, even when the grads were recorded.
      l.append(Wrap(t));
    }
    return nb::tuple(l);
  });
  // autograd.graph.GradientEdge: (node, output_nr) of a tensor's gradient (a leaf's: its
  // AccumulateGrad node), and autograd.grad over a mix of tensors and such edges.
  m.def("_gradient_edge", [](const PyTensor& t) {
    OF_CHECK(RequiresGrad(t)) << "It is not possible to get the gradient edge for a Tensor that does not require "
                                 "gradients";
    const Edge e = GradEdge(t);
    return nb::make_tuple(WrapNode(e.fn), e.input_nr);
  });
  m.def("_run_grad_edges", [](nb::handle outputs, nb::handle inputs, nb::handle grads, bool keep_graph,
                              bool create_graph, bool allow_unused) {
    const auto edge_of = [](nb::handle h, const char* what, size_t i) -> std::pair<Edge, Tensor> {
      if (nb::isinstance<nb::tuple>(h)) {
        auto tup = nb::borrow<nb::tuple>(h);
        OF_CHECK_TYPE(tup.size() == 2 && nb::isinstance<PyNode>(tup[0]))
            << what << "[" << i << "]: a GradientEdge is (Node, output_nr)";
        const IntrusivePtr<Node>& n = nb::cast<const PyNode&>(tup[0]).node;
        const int64_t nr = nb::cast<int64_t>(tup[1]);
        OF_CHECK_INDEX(nr >= 0 && nr < static_cast<int64_t>(n->outputs_.size()))
            << what << "[" << i << "]: output_nr " << nr << " out of range for " << n->name() << " ("
            << n->outputs_.size() << " outputs)";
        return {Edge{n, static_cast<uint32_t>(nr)}, Tensor()};
      }
      const Tensor t = ToTensor(h);
      OF_CHECK(RequiresGrad(t)) << (std::string(what) == "outputs"
                                        ? "element " + std::to_string(i) + " of tensors does not require grad and "
                                                                           "does not have a grad_fn"
                                        : std::string("One of the differentiated Tensors does not require grad"));
      return {GradEdge(t), t};
    };
    std::vector<Tensor> g = OptionalTensorList(grads);
    std::vector<Edge> roots, ins;
    std::vector<Tensor> seeds;
    size_t i = 0;
    for (nb::handle h : nb::borrow<nb::sequence>(outputs)) {
      auto [e, t] = edge_of(h, "outputs", i);
      Tensor seed = i < g.size() ? g[i] : Tensor();
      const OutputMeta& meta = e.fn->outputs_[e.input_nr];
      if (!seed.defined()) {
        OF_CHECK(t.defined()) << "grad_outputs[" << i << "] is required for a GradientEdge output";
        OF_CHECK(t.numel() == 1) << "grad can be implicitly created only for scalar outputs";
        seed = OnesLike(t, std::nullopt, std::nullopt, false);
      }
      OF_CHECK(seed.sizes() == meta.sizes) << "Mismatch in shape: grad_output[" << i << "] has a shape of "
                                           << ShapeStr(seed.sizes()) << " and output[" << i << "] has a shape of "
                                           << ShapeStr(meta.sizes) << ".";
      roots.push_back(e);
      seeds.push_back(seed);
      ++i;
    }
    i = 0;
    for (nb::handle h : nb::borrow<nb::sequence>(inputs)) ins.push_back(edge_of(h, "inputs", i++).first);
    BackwardOptions opt;
    opt.keep_graph = keep_graph;
    opt.create_graph = create_graph;
    opt.allow_unused = allow_unused;
    nb::list l;
    for (Tensor& t : RunBackwardEdges(roots, seeds, ins, opt)) l.append(Wrap(t));
    return nb::tuple(l);
  });
  // flow.autograd.Function: links `outputs` (computed without recording) to `inputs` through a
  // node calling `backward`; returns the outputs to hand to the user.
  m.def("_make_function_node", [](const std::string& name, nb::handle inputs, nb::handle outputs,
                                  nb::handle non_differentiable, nb::object backward, nb::handle to_save) {
    std::vector<Tensor> in = OptionalTensorList(inputs);
    bool any = false;
    for (const Tensor& t : in) any |= t.defined() && RequiresGrad(t);
    nb::list result;
    std::vector<Tensor> outs = OptionalTensorList(outputs);
    std::vector<bool> nondiff;
    for (nb::handle h : nb::borrow<nb::sequence>(non_differentiable)) nondiff.push_back(nb::cast<bool>(h));
    if (!GradMode::is_enabled() || !any) {
      for (const Tensor& o : outs) result.append(Wrap(o));
      return nb::tuple(result);
    }
    IntrusivePtr<PyFunctionNode> node(new PyFunctionNode());
    node->name_ = name;
    node->backward_ = std::move(backward);
    for (const Tensor& t : in) node->next_.push_back(t.defined() ? GradEdge(t) : Edge{});
    for (size_t k = 0; k < outs.size(); ++k) {
      Tensor o = outs[k];
      if (!o.defined()) {
        result.append(nb::none());
        continue;
      }
      for (const Tensor& t : in)
        if (t.defined() && o.is_same(t)) o = functional::Detach(o);  // an input returned as is
      if (IsDifferentiableType(o.dtype()) && !(k < nondiff.size() && nondiff[k])) SetHistory(o, node.get());
      else node->AddOutput(o);
      result.append(Wrap(o));
      outs[k] = o;
    }
    for (const Tensor& t : OptionalTensorList(to_save)) {
      bool is_output = false;
      Tensor v = t;
      for (const Tensor& o : outs)  // None entries are saved as None (undefined)
        if (t.defined() && o.defined() && o.storage() == t.storage() && o.sizes() == t.sizes() && o.offset() == t.offset() &&
            o.impl()->autograd_meta_ && o.impl()->autograd_meta_->grad_fn_.get() == node.get()) {
          is_output = true;
          v = o;
        }
      node->saved_.emplace_back(v, is_output);
    }
    return nb::tuple(result);
  });
}
OF_BIND(10, BindAutograd);

}  // namespace oneflow
