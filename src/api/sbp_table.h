// The op table's SBP signatures for C++ readers (tools/gen_sbp.py writes them into the generated
// ops_bind.cpp): Note [Global fast path] (api/global_bind.cpp) looks each op's rule up here, so
// the rules an op has are defined once, in the op table, for C++ and Python alike
// (python/oneflow/_global/sbp_table.py reads the same rows through `_sbp_table()`).
#pragma once

#include <span>

namespace oneflow {

// An op's dim / keepdim parameter as its `sig:` has it: name (nullptr: none), position (-1:
// keyword-only), the default's Python literal, varargs.
struct SbpArg {
  const char* name;
  int pos;
  const char* default_literal;
  bool varargs;
};

// op (table ops, their aliases and the Python-level names of tools/gen_sbp.py), the rule of
// python/oneflow/_global/signatures.py its signature names, the dim / keepdim parameters the rule
// reads.
struct SbpSignature {
  const char* op;
  const char* rule;
  SbpArg dim, keepdim;
};

// Every op's signature, sorted by op name (strcmp order).
std::span<const SbpSignature> SbpSignatures();
// {Python operator, the op it runs}: the entries' `dunder:` (`__iX__`: the in-place op) and the
// unary operators of tools/gen_sbp.py, sorted by operator. A reflected operator (`__radd__`) is
// its operator's op with the operands swapped.
std::span<const char* const[2]> SbpDunders();

}  // namespace oneflow
