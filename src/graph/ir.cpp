// The traced program as text (Program::Describe): one line per node,
//   %7:f32[64,10] = matmul(%5, %6)  # model.py:41
// a slot with its dtype and sizes from tracing, the op, its arguments (slots, captured tensors by
// their names, other values; a table op's arguments left at their defaults are not shown) and the
// user's source line. Python steps print as `<python k>(ins) -> outs`; nodes of the traced
// backward pass end in `[backward]`.
#include <functional>
#include <sstream>

#include "graph/fusion.h"
#include "graph/lazy.h"

namespace oneflow::lazy {

namespace {

const char* ShortDType(DType t) {
  switch (t) {
    case DType::kBool: return "b8";
    case DType::kInt8: return "i8";
    case DType::kUInt8: return "u8";
    case DType::kInt16: return "i16";
    case DType::kInt32: return "i32";
    case DType::kInt64: return "i64";
    case DType::kFloat16: return "f16";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat32: return "f32";
    case DType::kFloat64: return "f64";
    case DType::kComplex64: return "c64";
    case DType::kComplex128: return "c128";
  }
  return "?";
}

// (`dynamic`: the dims printed `?`, their sizes known only when the program runs: Note [Dynamic shapes])
std::string TypeStr(const Tensor& t, uint64_t dynamic = 0) {
  std::ostringstream os;
  os << ShortDType(t.dtype()) << "[";
  for (int64_t d = 0; d < t.dim(); ++d) {
    os << (d ? "," : "");
    if (d < 64 && (dynamic >> d & 1)) os << '?';
    else os << t.sizes()[d];
  }
  os << "]";
  return os.str();
}

std::string Basename(const std::string& loc) {
  size_t k = loc.rfind('/');
  return k == std::string::npos ? loc : loc.substr(k + 1);
}

std::string ValueText(const Value& v, const Program& p) {
  return std::visit([&](const auto& x) -> std::string {
    using T = std::decay_t<decltype(x)>;
    std::ostringstream os;
    if constexpr (std::is_same_v<T, std::monostate>) os << "None";
    else if constexpr (std::is_same_v<T, Tensor>) {
      if (!x.defined()) return "None";
      if (x.is_wrapped_number() && x.numel() == 1) {  // a Python number: its value
        if (IsFloating(x.dtype())) os << ItemOf(x).ToDouble();
        else if (x.dtype() == DType::kBool) os << (ItemOf(x).ToInt() ? "True" : "False");
        else if (!IsComplex(x.dtype())) os << ItemOf(x).ToInt();
        else os << "<complex>";
        return os.str();
      }
      auto it = p.names.find(x.impl());
      os << (it != p.names.end() ? it->second : "const") << ":" << TypeStr(x);
    } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) os << "[" << x.size() << " tensors]";
    else if constexpr (std::is_same_v<T, bool>) os << (x ? "True" : "False");
    else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) os << x;
    else if constexpr (std::is_same_v<T, Scalar>) {
      if (x.is_float()) os << x.ToDouble(); else os << x.ToInt();
    } else if constexpr (std::is_same_v<T, DimVector> || std::is_same_v<T, std::vector<double>>) {
      os << "[";
      for (size_t i = 0; i < x.size(); ++i) os << (i ? ", " : "") << x[i];
      os << "]";
    } else if constexpr (std::is_same_v<T, DType>) os << DTypeName(x);
    else if constexpr (std::is_same_v<T, Device>) os << x.str();
    else if constexpr (std::is_same_v<T, std::string>) os << "'" << x << "'";
    else os << "<generator>";
    return os.str();
  }, v);
}

}  // namespace

std::string Program::NodeText(const Node& n) const {
  std::ostringstream os;
  auto slot = [&](int s) {
    std::string t = "%" + std::to_string(s);
    if (s >= 0 && s < static_cast<int>(meta.size()) && meta[s].defined())
      t += ":" + TypeStr(meta[s], Dynamic(s) ? dynamic[s] : 0);
    return t;
  };
  if (n.barrier >= 0) {
    os << "<python " << n.barrier << ">(";
    for (size_t i = 0; i < n.refs.size(); ++i) os << (i ? ", " : "") << "%" << n.refs[i].slot;
    os << ")";
    if (!n.outs.empty()) {
      os << " -> ";
      for (size_t i = 0; i < n.outs.size(); ++i) os << (i ? ", " : "") << slot(n.outs[i]);
    }
    return os.str();
  }
  for (size_t i = 0; i < n.outs.size(); ++i) os << (i ? ", " : "") << (n.outs[i] >= 0 ? slot(n.outs[i]) : "_");
  os << (n.outs.empty() ? "" : " = ");
  // Arguments [begin, end) of `schema` (null: none known); `inner(k)`: the text of argument k
  // when a fused node computes it itself, or empty.
  auto args_text = [&](const OpSchema* schema, size_t begin, size_t end, const auto& inner) {
    std::string out;
    bool first = true, skipped = false;
    for (size_t k = begin; k < end; ++k) {
      std::string a = inner(k);
      bool is_slot = !a.empty();
      for (const SlotRef& r : n.refs)
        if (r.arg == static_cast<int>(k) && r.elem < 0) a = "%" + std::to_string(r.slot), is_slot = true;
      for (const SizeRef& z : n.size_refs)  // a number read from a value's sizes: `%5.numel()`
        if (z.arg == static_cast<int>(k) && z.elem < 0) {
          a = "%" + std::to_string(n.refs[z.ref].slot) + (z.dim < 0 ? std::string(".numel()") : ".size(" + std::to_string(z.dim) + ")");
          is_slot = true;
        }
      if (const auto* v = std::get_if<DimVector>(&n.args[k]); v && !n.size_refs.empty()) {
        // Note [Dynamic shapes]: sizes read from a value when the node runs: `[%9.size(0), 3]`
        std::vector<std::string> e;
        for (int64_t x : *v) e.push_back(std::to_string(x));
        bool linked = false;
        for (const SizeRef& z : n.size_refs)
          if (z.arg == static_cast<int>(k) && z.elem < static_cast<int>(e.size())) {
            e[z.elem] = "%" + std::to_string(n.refs[z.ref].slot) + ".size(" + std::to_string(z.dim) + ")";
            linked = true;
          }
        if (linked) {
          a = "[";
          for (size_t i = 0; i < e.size(); ++i) a += (i ? ", " : "") + e[i];
          a += "]";
          is_slot = true;  // (shown even where it is the default)
        }
      }
      if (!is_slot && std::holds_alternative<std::vector<Tensor>>(n.args[k])) {  // a list: its slots and tensors
        const auto& ts = std::get<std::vector<Tensor>>(n.args[k]);
        a = "[";
        for (size_t e = 0; e < ts.size(); ++e) {
          std::string x = ValueText(Value(ts[e]), *this);
          for (const SlotRef& r : n.refs)
            if (r.arg == static_cast<int>(k) && r.elem == static_cast<int>(e)) x = "%" + std::to_string(r.slot);
          a += (e ? ", " : "") + x;
        }
        a += "]";
        is_slot = true;
      }
      if (!is_slot) {
        bool per_run = false;  // Note [Scalar inputs]: its value is read when the node runs
        for (const auto& sc : n.scalars) per_run |= sc.first == static_cast<int>(k);
        a = per_run ? std::string("<input>") : ValueText(n.args[k], *this);
        if (schema && k - begin < schema->params.size()) {
          const ParamSchema& ps = schema->params[k - begin];
          if (!per_run && ps.has_default && ValueText(ps.default_value, *this) == a) {  // left at its default
            skipped = true;
            continue;
          }
          if (ps.kw_only || skipped) a = ps.name + "=" + a;
        }
      }
      out += (first ? "" : ", ") + a;
      first = false;
    }
    return out;
  };
  auto none = [](size_t) { return std::string(); };
  if (FusedOutputArg(n) >= 0) {
    // Its members as one expression (Note [Fused pointwise nodes]); a member read more than once
    // (or any, in a long group) is named: `fused_pointwise{$0 = mul(%1, %2); add($0, exp($0))}`.
    const FusedLayout l = ReadFusedLayout(n.args);
    const size_t count = l.op.size();
    std::vector<int> reads(count, 0);
    for (int m : l.source)
      if (m >= 0) ++reads[m];
    auto named = [&](size_t m) { return m + 1 < count && (reads[m] != 1 || count > 32); };
    std::function<std::string(size_t)> member = [&](size_t m) {
      auto inner = [&](size_t k) {
        if (l.source[k] < 0) return std::string();
        return named(l.source[k]) ? "$" + std::to_string(l.source[k]) : member(l.source[k]);
      };
      return l.op[m]->name + "(" + args_text(l.op[m], l.begin[m], l.begin[m + 1], inner) + ")";
    };
    os << "fused_pointwise{";
    for (size_t m = 0; m + 1 < count; ++m)
      if (named(m)) os << "$" << m << " = " << member(m) << "; ";
    os << member(count - 1) << "}";
  } else {
    os << n.name << "(" << args_text(n.schema, 0, n.args.size(), none) << ")";
  }
  if (!n.local_grads.empty()) {  // Note [Local autograd nodes]: the inputs its own autograd differentiates
    os << "  {local_grads: [";
    for (size_t g = 0; g < n.local_grads.size(); ++g) {
      const ArgPos pos = n.local_grads[g];
      std::string x;
      for (const SlotRef& r : n.refs)
        if (r.arg == pos.arg && r.elem == pos.elem) x = "%" + std::to_string(r.slot);
      if (x.empty()) {  // a captured tensor (a parameter)
        const Value& v = n.args[static_cast<size_t>(pos.arg)];
        x = pos.elem < 0 ? ValueText(v, *this)
                         : ValueText(Value(std::get<std::vector<Tensor>>(v)[static_cast<size_t>(pos.elem)]), *this);
      }
      os << (g ? ", " : "") << x;
    }
    os << "]}";
  }
  if (n.backward) os << "  [backward]";  // Note [Backward nodes] (they run without grad mode)
  else if (!n.grad_enabled) os << "  [no_grad]";
  if (!n.loc.empty()) os << "  # " << Basename(n.loc);
  return os.str();
}

std::string Program::Describe() const {
  std::ostringstream os;
  os << "graph(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    int s = inputs[i];
    os << (i ? ", " : "") << "%" << s;
    if (s < static_cast<int>(meta.size())) os << ":" << TypeStr(meta[s], Dynamic(s) ? dynamic[s] : 0);
  }
  os << "):\n";
  for (const auto& [s, t] : consts) os << "  %" << s << ":" << TypeStr(t) << " = constant\n";
  for (const Node& n : nodes) os << "  " << NodeText(n) << "\n";
  if (!outputs.empty()) {
    os << "  return ";
    for (size_t i = 0; i < outputs.size(); ++i) os << (i ? ", " : "") << "%" << Resolve(outputs[i]);
    os << "\n";
  }
  return os.str();
}

}  // namespace oneflow::lazy
