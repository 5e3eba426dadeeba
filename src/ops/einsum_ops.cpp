// einsum (PyTorch semantics: implicit/explicit output, ellipsis broadcasting, repeated subscripts
// as diagonals, size-1 broadcasting), planned into table ops so that it is differentiable and its
// contractions run on BLAS:
//   1. every operand becomes a view over one aligned dim order: the output dims (in output
//      order), then the summed subscripts; repeated subscripts become diagonals, missing ones
//      unit dims;
//   2. dims only one operand has and the output lacks are summed right away;
//   3. operands are contracted left to right; each pair is permuted to [batch, kept-left, summed]
//      x [batch, summed, kept-right] and multiplied by one bmm (a plain mul when nothing is
//      summed, mul + sum when neither side keeps a dim).
// `bij,bjk->bik` is thus exactly one bmm on the inputs' own memory.
#include <array>

#include "autograd/functional.h"
#include "ops/copy.h"
#include "decl/bmm.h"
#include "decl/diagonal.h"
#include "decl/einsum.h"
#include "decl/mul.h"
#include "decl/permute.h"
#include "decl/reshape.h"
#include "decl/sum.h"
#include "decl/unsqueeze.h"

namespace oneflow::functional {

namespace {

constexpr int kLabels = 52;  // A-Z then a-z, PyTorch's order for the implicit output
constexpr int kEllipsis = -1;

int LabelOf(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -2;
}
char CharOf(int l) { return l < 26 ? 'A' + l : 'a' + (l - 26); }

struct Term {
  std::vector<int> labels;  // kEllipsis marks where the ellipsis sits
  bool has_ellipsis = false;
};

// Parses "ab...c" starting at equation[pos, end); `what` names the term in errors.
Term ParseTerm(const std::string& eq, size_t pos, size_t end, int operand) {
  Term t;
  for (size_t i = pos; i < end; ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (operand >= 0) {
        OF_CHECK(!t.has_ellipsis) << "found '.' for operand " << operand
                                  << " for which an ellipsis was already found";
        OF_CHECK(i + 2 < end && eq[i + 1] == '.' && eq[i + 2] == '.')
            << "found '.' for operand " << operand << " that is not part of any ellipsis";
      } else {
        OF_CHECK(!t.has_ellipsis) << "found '.' for output but an ellipsis (...) was already found";
        OF_CHECK(i + 2 < end && eq[i + 1] == '.' && eq[i + 2] == '.')
            << "found '.' for output that is not part of any ellipsis (...)";
      }
      t.has_ellipsis = true;
      t.labels.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int l = LabelOf(c);
    OF_CHECK(l >= 0) << "invalid subscript given at index " << i
                     << " in the equation string, subscripts must be in [a-zA-Z]";
    t.labels.push_back(l);
  }
  return t;
}

// One aligned dim: a subscript or one of the ellipsis dims.
struct Slot {
  int label;    // >= 0 for a subscript, kEllipsis for an ellipsis dim
  int ell_pos;  // which ellipsis dim (0 = outermost), for ellipsis slots
};

// keep_dtype: sums feeding a contraction keep the operands' dtype (a later bmm needs both sides
// alike); the final sums of a single operand promote integers like sum() does (as PyTorch).
Tensor SumDims(const Tensor& t, const std::vector<int>& dims, bool keep_dtype) {
  if (dims.empty()) return t;
  DimVector d;
  for (int x : dims) d.push_back(x);
  return functional::Sum(t, d, true, keep_dtype ? std::optional<DType>(t.dtype()) : std::nullopt);
}

// Contracts two aligned operands over `sum` (a mask over slots); the result stays aligned.
Tensor SumProductPair(const Tensor& left, const Tensor& right, const std::vector<bool>& sum) {
  const int nd = left.dim();
  Tensor l = left, r = right;
  // A summed dim present on one side only is summed there first.
  std::vector<int> sl, sr;
  for (int d = 0; d < nd; ++d) {
    if (!sum[d]) continue;
    if (l.sizes()[d] > 1 && r.sizes()[d] == 1) sl.push_back(d);
    if (r.sizes()[d] > 1 && l.sizes()[d] == 1) sr.push_back(d);
  }
  l = SumDims(l, sl, true);
  r = SumDims(r, sr, true);
  std::vector<int> batch, lo, ro, contract, unit;
  for (int d = 0; d < nd; ++d) {
    const int64_t a = l.sizes()[d], b = r.sizes()[d];
    if (sum[d] && a > 1 && b > 1) contract.push_back(d);
    else if (!sum[d] && a > 1 && b > 1) batch.push_back(d);
    else if (!sum[d] && a > 1) lo.push_back(d);
    else if (!sum[d] && b > 1) ro.push_back(d);
    else unit.push_back(d);
  }
  if (contract.empty()) return functional::Mul(l, r);
  if (lo.empty() && ro.empty()) {
    // A contraction keeps the operands' dtype (as a bmm would), unlike a plain integer sum.
    DimVector d;
    for (int x : contract) d.push_back(x);
    return functional::Sum(functional::Mul(l, r), d, true, l.dtype());
  }
  auto prod = [](const Tensor& t, const std::vector<int>& ds) {
    int64_t p = 1;
    for (int d : ds) p *= t.sizes()[d];
    return p;
  };
  const int64_t B = prod(l, batch), M = prod(l, lo), K = prod(l, contract), N = prod(r, ro);
  DimVector pl, pr;
  for (int d : batch) pl.push_back(d);
  for (int d : lo) pl.push_back(d);
  for (int d : contract) pl.push_back(d);
  for (int d : ro) pl.push_back(d);
  for (int d : unit) pl.push_back(d);
  for (int d : batch) pr.push_back(d);
  for (int d : contract) pr.push_back(d);
  for (int d : ro) pr.push_back(d);
  for (int d : lo) pr.push_back(d);
  for (int d : unit) pr.push_back(d);
  Tensor a = functional::Reshape(functional::Permute(l, pl), DimVector{B, M, K});
  Tensor b = functional::Reshape(functional::Permute(r, pr), DimVector{B, K, N});
  Tensor c = functional::Bmm(a, b);
  // Back to the aligned order: [batch, lo, ro] sizes, unit dims for everything else.
  DimVector shape, order;
  for (int d : batch) { shape.push_back(l.sizes()[d]); order.push_back(d); }
  for (int d : lo) { shape.push_back(l.sizes()[d]); order.push_back(d); }
  for (int d : ro) { shape.push_back(r.sizes()[d]); order.push_back(d); }
  for (int d : contract) { shape.push_back(1); order.push_back(d); }
  for (int d : unit) { shape.push_back(1); order.push_back(d); }
  DimVector inv(nd);
  for (int i = 0; i < nd; ++i) inv[order[i]] = i;
  return functional::Permute(functional::Reshape(c, shape), inv);
}

}  // namespace

Tensor Einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  OpScope scope("einsum");
  OF_CHECK(!operands.empty()) << "must provide at least one operand";
  const size_t arrow = equation.find("->");
  const size_t lhs_end = arrow == std::string::npos ? equation.size() : arrow;
  // Terms of the inputs.
  std::vector<Term> terms;
  size_t start = 0;
  for (size_t i = 0; i <= lhs_end; ++i) {
    if (i == lhs_end || equation[i] == ',') {
      OF_CHECK(terms.size() < operands.size()) << "fewer operands were provided than specified in the equation";
      terms.push_back(ParseTerm(equation, start, i, terms.size()));
      start = i + 1;
    }
  }
  OF_CHECK(terms.size() == operands.size()) << "more operands were provided than specified in the equation";
  // Ellipsis dims per operand; the widest one sets the output's.
  int ell_max = 0;
  bool any_ellipsis = false;
  std::array<int, kLabels> count{};
  for (size_t i = 0; i < terms.size(); ++i) {
    const Tensor& t = operands[i];
    int nlabels = 0;
    for (int l : terms[i].labels) if (l != kEllipsis) { ++nlabels; ++count[l]; }
    if (terms[i].has_ellipsis) {
      OF_CHECK(t.dim() >= nlabels) << "the number of subscripts in the equation (" << nlabels
                                   << ") is more than the number of dimensions (" << t.dim() << ") for operand " << i;
      ell_max = std::max(ell_max, t.dim() - nlabels);
      any_ellipsis = true;
    } else {
      OF_CHECK(t.dim() == nlabels) << "the number of subscripts in the equation (" << nlabels
                                   << ") does not match the number of dimensions (" << t.dim() << ") for operand " << i
                                   << " and no ellipsis was given";
    }
    OF_CHECK(t.dtype() == operands[0].dtype()) << "expected scalar type " << DTypeName(operands[0].dtype())
                                               << " but found " << DTypeName(t.dtype());
    CheckSameDevice(operands[0], t);
  }
  // The output's slots.
  std::vector<Slot> slots;
  std::array<int, kLabels> slot_of;
  slot_of.fill(-1);
  int ell_slot = -1;  // first slot of the ellipsis block
  auto add_ellipsis = [&] {
    ell_slot = slots.size();
    for (int e = 0; e < ell_max; ++e) slots.push_back({kEllipsis, e});
  };
  if (arrow != std::string::npos) {
    Term out = ParseTerm(equation, arrow + 2, equation.size(), -1);
    for (int l : out.labels) {
      if (l == kEllipsis) { add_ellipsis(); continue; }
      OF_CHECK(count[l] > 0) << "output subscript " << CharOf(l)
                             << " does not appear in the equation for any input operand";
      OF_CHECK(slot_of[l] < 0) << "output subscript " << CharOf(l) << " appears more than once in the output";
      slot_of[l] = slots.size();
      slots.push_back({l, 0});
    }
  } else {
    // Implicit output: the ellipsis dims, then the subscripts seen exactly once, in label order.
    if (any_ellipsis) add_ellipsis();
    for (int l = 0; l < kLabels; ++l)
      if (count[l] == 1) { slot_of[l] = slots.size(); slots.push_back({l, 0}); }
  }
  const int n_out = slots.size();
  for (int l = 0; l < kLabels; ++l)
    if (count[l] > 0 && slot_of[l] < 0) { slot_of[l] = slots.size(); slots.push_back({l, 0}); }
  if (ell_slot < 0 && ell_max > 0) add_ellipsis();  // summed away at the end
  const int nd = slots.size();
  OF_CHECK(nd <= kMaxDims) << "the equation uses " << nd << " distinct dims, at most " << kMaxDims
                           << " are supported";
  // 1. Align every operand.
  std::vector<Tensor> ops;
  std::vector<std::vector<bool>> has(operands.size(), std::vector<bool>(nd, false));
  DimVector seen(nd, 1);
  for (size_t i = 0; i < operands.size(); ++i) {
    Tensor t = operands[i];
    // The slot of each dim of t (ellipsis dims right-aligned in the ellipsis block).
    std::vector<int> dim_slot;
    const int ell_dims = terms[i].has_ellipsis ? t.dim() - (int(terms[i].labels.size()) - 1) : 0;
    for (int l : terms[i].labels) {
      if (l == kEllipsis) {
        for (int e = 0; e < ell_dims; ++e) dim_slot.push_back(ell_slot + ell_max - ell_dims + e);
      } else {
        dim_slot.push_back(slot_of[l]);
      }
    }
    // Repeated subscripts: take the diagonal (it moves to the last dim).
    for (bool again = true; again;) {
      again = false;
      for (int a = 0; a < dim_slot.size() && !again; ++a)
        for (int b = a + 1; b < dim_slot.size() && !again; ++b) {
          if (dim_slot[a] != dim_slot[b]) continue;
          OF_CHECK(t.sizes()[a] == t.sizes()[b])
              << "subscript " << CharOf(slots[dim_slot[a]].label) << " is repeated for operand " << i
              << " but the sizes don't match, " << t.sizes()[b] << " != " << t.sizes()[a];
          const int s = dim_slot[a];
          t = functional::Diagonal(t, 0, a, b);
          dim_slot.erase(dim_slot.begin() + b);
          dim_slot.erase(dim_slot.begin() + a);
          dim_slot.push_back(s);
          again = true;
        }
    }
    // Permute the dims into slot order, then insert unit dims for the slots t lacks.
    DimVector perm;
    for (int s = 0; s < nd; ++s)
      for (int d = 0; d < dim_slot.size(); ++d)
        if (dim_slot[d] == s) perm.push_back(d);
    t = functional::Permute(t, perm);
    for (int s = 0; s < nd; ++s) {
      bool present = false;
      for (int x : dim_slot) present |= x == s;
      if (!present) t = functional::Unsqueeze(t, s);
      has[i][s] = present && t.sizes()[s] != 1;
      const int64_t size = t.sizes()[s];
      if (size != 1) {
        if (slots[s].label >= 0) {
          OF_CHECK(seen[s] == 1 || seen[s] == size)
              << "subscript " << CharOf(slots[s].label) << " has size " << size << " for operand " << i
              << " which does not broadcast with previously seen size " << seen[s];
        } else {
          OF_CHECK(seen[s] == 1 || seen[s] == size)
              << "operands do not broadcast: an ellipsis dim has size " << size << " for operand " << i
              << " and " << seen[s] << " before";
        }
        seen[s] = size;
      }
    }
    ops.push_back(t);
  }
  if (ops.size() > 1) OF_CHECK(ops[0].dtype() != DType::kBool) << "\"bmm\" not implemented for 'Bool'";
  // 2. Dims only one operand has (and the output lacks) are summed at once.
  for (size_t i = 0; i < ops.size() && ops.size() > 1; ++i) {
    std::vector<int> only;
    for (int s = n_out; s < nd; ++s) {
      if (!has[i][s]) continue;
      bool elsewhere = false;
      for (size_t j = 0; j < ops.size(); ++j) elsewhere |= j != i && has[j][s];
      if (!elsewhere) only.push_back(s);
    }
    ops[i] = SumDims(ops[i], only, true);
    for (int s : only) has[i][s] = false;
  }
  // 3. Contract left to right; a summed dim is contracted once no later operand has it.
  Tensor result = ops[0];
  std::vector<bool> rhas = has[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    std::vector<bool> sum(nd, false);
    for (int s = n_out; s < nd; ++s) {
      bool later = false;
      for (size_t j = i + 1; j < ops.size(); ++j) later |= has[j][s];
      sum[s] = !later;
    }
    result = SumProductPair(result, ops[i], sum);
    for (int s = 0; s < nd; ++s) rhas[s] = rhas[s] || has[i][s];
  }
  // Whatever summed dims remain (single operand, or broadcast ones) go now.
  std::vector<int> rest;
  for (int s = n_out; s < nd; ++s)
    if (result.sizes()[s] != 1 || ops.size() == 1) rest.push_back(s);
  result = SumDims(result, rest, ops.size() > 1);
  DimVector out_shape(result.sizes().begin(), result.sizes().begin() + n_out);
  return functional::Reshape(result, out_shape);
}

}  // namespace oneflow::functional
