"""Each op's SBP signature, as the op table declares it (a pointwise `kind:`, an `sbp:` field, the
Python-level names of tools/gen_sbp.py): tools/gen_ops.py writes the rows into the extension
(ops_bind.cpp, C++ arrays), the build regenerating them when an entry changes, and this module
reads them through its binding -- one definition for C++ and Python, no op named here.

SIGNATURES: op name -> its rule in signatures.RULES; DUNDER: Python operator -> op; ARGS: op ->
{"dim" / "keepdim": (parameter name, position or None: keyword-only, default, varargs)} for the
rules that read them (from the op's `sig:`); NO_SIGNATURE: op -> why it has none (the entry's
`no_sbp:`, named by the dispatcher's RuntimeError)."""
import ast

from .. import _oneflow_internal as _C

SIGNATURES, DUNDER, _args, NO_SIGNATURE = _C._sbp_table()
ARGS = {op: {key: (name, pos, ast.literal_eval(default), varargs) for key, (name, pos, default, varargs) in a.items()}
        for op, a in _args.items()}
del _args
