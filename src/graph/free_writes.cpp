// Note [Writes to free tensors] (free_writes.h).
#include "graph/free_writes.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "autograd/node.h"
#include "graph/serialize.h"

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

// An input's copy, in the input's own slot: `%0 = input_copy_(%0)`. In-place by its name (Note
// [Pure nodes]: it rebinds a slot nodes read), so that no pass takes it for an op returning its
// input or moves a reader across it.
std::vector<Tensor> InputCopy(const std::vector<Value>& a) {
  static const OpSchema& clone = BoxedSchema("clone");
  return clone.call({a.at(0)});
}

// (registered when the library loads: a saved program holding one loads without a trace first)
const bool kInputCopyRegistered = (RegisterNodeFn("input_copy_", &InputCopy), true);

}  // namespace

std::vector<int> CopyFreeWrites(Program& p, const std::vector<Tensor>& state, const std::vector<Tensor>& returned,
                                bool training) {
  std::unordered_set<const TensorImpl*> kept;
  for (const Tensor& t : state) kept.insert(t.impl());
  std::unordered_set<int> inputs(p.inputs.begin(), p.inputs.end());
  // What each view slot looks into (a view's base is its first argument): a captured tensor or a
  // graph input; and the free tensors and inputs written, in order of their first write.
  struct Root {
    Tensor captured;  // or undefined: the input slot
    int input = -1;
  };
  std::unordered_map<int, Root> base;
  auto root_of = [&](const Node& n) -> std::optional<Root> {
    if (const Tensor* t = CapturedArg(n, 0)) return Root{*t, -1};
    int s = SlotArg(n, 0);
    if (inputs.count(s)) return Root{Tensor(), s};
    if (auto b = base.find(s); b != base.end()) return b->second;
    return std::nullopt;
  };
  std::unordered_map<const TensorImpl*, Tensor> free;
  std::vector<const TensorImpl*> order;
  std::vector<int> written_inputs;
  for (const Node& n : p.nodes) {
    if (n.aliases && !n.args.empty())
      if (std::optional<Root> r = root_of(n))
        for (int o : n.outs)
          if (o >= 0) base[o] = *r;
    if (!WritesFirstArgument(n)) continue;
    std::optional<Root> r = root_of(n);
    if (!r) continue;
    if (r->input >= 0) {
      // (a training graph's input requiring grad is a leaf its gradient goes to)
      if (training && p.meta[r->input].requires_grad()) continue;
      if (std::find(written_inputs.begin(), written_inputs.end(), r->input) == written_inputs.end())
        written_inputs.push_back(r->input);
      continue;
    }
    const Tensor& target = r->captured;
    // (a leaf requiring grad is a parameter, of a module the graph may not hold: state)
    if (target.is_wrapped_number() || kept.count(target.impl()) ||
        (RequiresGrad(target) && (training || IsLeaf(target))) || free.count(target.impl()))
      continue;
    free.emplace(target.impl(), target);
    order.push_back(target.impl());
  }
  std::vector<int> out(returned.size(), -1);
  if (order.empty() && written_inputs.empty()) return out;

  const OpSchema& clone = BoxedSchema("clone");
  std::vector<Node> copies;
  // A free tensor's copy is a new slot; an input's replaces the input in its own slot
  // (`%0 = clone(%0)`: every reader -- nodes, outputs, Python steps -- then sees the copy).
  auto copy_node = [&](Value arg, const Tensor& meta_in, int input) {
    Node c;
    c.name = "clone";
    c.fn = clone.call;
    c.schema = &clone;
    c.args = {std::move(arg)};
    c.grad_enabled = false;  // (a training graph's copies require no grad)
    int s = input;
    if (input >= 0) {
      c.name = "input_copy_";
      c.fn = &InputCopy;
      c.schema = nullptr;
      c.refs.push_back({0, -1, input});
    } else {
      s = p.num_slots++;
      p.meta.push_back(clone.call({Value(ToMeta(meta_in))}).at(0));
    }
    c.outs = {s};
    copies.push_back(std::move(c));
    return s;
  };
  std::unordered_map<const TensorImpl*, int> copy;  // free tensor -> its copy's slot
  for (const TensorImpl* impl : order) copy[impl] = copy_node(Value(free.at(impl)), free.at(impl), -1);
  for (int i : written_inputs) copy_node(Value(Tensor()), p.meta[i], i);
  // Every reference to a free tensor reads its copy; a writer returning it returns the copy.
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
