// Note [Writes to free tensors] (free_writes.h).
#include "graph/free_writes.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "autograd/node.h"

namespace oneflow::lazy {

namespace {

// The node writes its first argument: the in-place forms, `setitem`, `copy_`, `slice_update`. A gradient's accumulation writes the leaf's `.grad`, not the leaf.
bool WritesFirstArgument(const Node& n) {
  if (n.barrier >= 0 || !n.fn || n.args.empty()) return false;
  std::string_view op = n.name;
  if (op == "setitem" || op == "slice_update") return true;
  if (op == "accumulate_grad_") return false;
  return op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_';
}

const Tensor* CapturedArg(const Node& n, int k) {
  const auto* t = std::get_if<Tensor>(&n.args[k]);
  return t && t->defined() ? t : nullptr;  // (a slot's argument is left undefined)
}

int SlotArg(const Node& n, int k) {
  for (const SlotRef& r : n.refs)
    if (r.arg == k && r.elem < 0) return r.slot;
  return -1;
}

}  // namespace

std::vector<int> CopyFreeWrites(Program& p, const std::vector<Tensor>& state, const std::vector<Tensor>& returned,
                                bool training) {
  std::unordered_set<const TensorImpl*> kept;
  for (const Tensor& t : state) kept.insert(t.impl());
  // The captured tensor each view slot looks into (a view's base is its first argument), and the
  // free tensors written, in order of their first write.
  std::unordered_map<int, Tensor> base;
  std::unordered_map<const TensorImpl*, Tensor> free;
  std::vector<const TensorImpl*> order;
  for (const Node& n : p.nodes) {
    if (n.aliases && !n.args.empty()) {
      const Tensor* root = CapturedArg(n, 0);
      if (!root)
        if (auto b = base.find(SlotArg(n, 0)); b != base.end()) root = &b->second;
      if (root) {
        Tensor r = *root;
        for (int o : n.outs)
          if (o >= 0) base[o] = r;
      }
    }
    if (!WritesFirstArgument(n)) continue;
    const Tensor* target = CapturedArg(n, 0);
    if (!target) {
      auto b = base.find(SlotArg(n, 0));
      if (b == base.end()) continue;
      target = &b->second;
    }
    if (target->is_wrapped_number() || kept.count(target->impl()) || (training && RequiresGrad(*target)) ||
        free.count(target->impl()))
      continue;
    free.emplace(target->impl(), *target);
    order.push_back(target->impl());
  }
  std::vector<int> out(returned.size(), -1);
  if (order.empty()) return out;

  const OpSchema& clone = BoxedSchema("clone");
  std::unordered_map<const TensorImpl*, int> copy;  // free tensor -> its copy's slot
  std::vector<Node> copies;
  for (const TensorImpl* impl : order) {
    const Tensor& t = free.at(impl);
    Node c;
    c.name = "clone";
    c.fn = clone.call;
    c.schema = &clone;
    c.args = {Value(t)};
    c.grad_enabled = false;  // (a training graph's copies require no grad)
    std::vector<Tensor> meta = clone.call({Value(ToMeta(t))});
    int s = p.num_slots++;
    p.meta.push_back(meta.at(0));
    c.outs = {s};
    copy[impl] = s;
    copies.push_back(std::move(c));
  }
  // Every later reference to a free tensor reads its copy; a writer returning it returns the copy.
  for (Node& n : p.nodes) {
    for (size_t k = 0; k < n.args.size(); ++k) {
      if (auto* t = std::get_if<Tensor>(&n.args[k]); t && t->defined()) {
        if (auto c = copy.find(t->impl()); c != copy.end()) {
          bool returns_it = WritesFirstArgument(n) && k == 0 && !n.outs.empty() && n.outs[0] < 0;
          *t = Tensor();
          n.refs.push_back({static_cast<int>(k), -1, c->second});
          if (returns_it) n.outs[0] = c->second;
        }
      } else if (auto* ts = std::get_if<std::vector<Tensor>>(&n.args[k])) {
        for (size_t e = 0; e < ts->size(); ++e)
          if (auto c = copy.find((*ts)[e].impl()); (*ts)[e].defined() && c != copy.end()) {
            (*ts)[e] = Tensor();
            n.refs.push_back({static_cast<int>(k), static_cast<int>(e), c->second});
          }
      }
    }
  }
  p.nodes.insert(p.nodes.begin(), std::make_move_iterator(copies.begin()), std::make_move_iterator(copies.end()));
  for (size_t k = 0; k < returned.size(); ++k)
    if (auto c = copy.find(returned[k].impl()); returned[k].defined() && c != copy.end()) {
      out[k] = c->second;
      p.pinned.push_back(c->second);
      p.outputs.push_back(c->second);
    }
  return out;
}

}  // namespace oneflow::lazy
