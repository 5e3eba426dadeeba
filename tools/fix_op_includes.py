"""Keeps the op includes of hand-written sources: each file includes generated/decl/<op>.h for
exactly the table ops it mentions (tools/op_decls.py says why).

    fix_op_includes.py            rewrite every file under src/{ops,autograd,api} whose list is off
    fix_op_includes.py --check    list those files and exit 1 if there are any (tests run this)
    fix_op_includes.py FILE...    only these files

The list is the block of `#include "decl/..."` lines after a file's other includes; a file that
mentions no op gets none. Kernels and core (src/kernels, src/core) never call ops.
"""
import glob
import os
import re
import sys

import gen_ops
import op_decls
import optable

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DIRS = ("src/ops", "src/autograd", "src/api")
DECL = re.compile(r'^#include "decl/[\w]+\.h"\n', re.M)


def fixed(text, names):
    want = op_decls.includes_for(text, names)
    body = DECL.sub("", text)
    if not want:
        return body
    # After the last include of the leading block (comments, blank lines, #pragma, #include):
    # some headers include more at their end, after code that needs the ops.
    at = pos = 0
    for line in body.splitlines(keepends=True):
        s = line.strip()
        if s.startswith("#include"):
            at = pos + len(line)
        elif s and not s.startswith(("//", "#pragma")):
            break
        pos += len(line)
    return body[:at] + "".join(w + "\n" for w in want) + body[at:]


def sources():
    out = []
    for d in DIRS:
        for ext in ("cpp", "h"):
            out += glob.glob(os.path.join(ROOT, d, "**", f"*.{ext}"), recursive=True)
    return sorted(out)


def main(argv):
    check = "--check" in argv
    files = [a for a in argv if a != "--check"] or sources()
    names = op_decls.declared([gen_ops.Op(e) for e in optable.load()])
    off = []
    for fn in files:
        text = open(fn).read()
        new = fixed(text, names)
        if new != text:
            off.append(os.path.relpath(fn, ROOT))
            if not check:
                with open(fn, "w") as f:
                    f.write(new)
    if check and off:
        print("op includes out of date (run tools/fix_op_includes.py):\n  " + "\n  ".join(off))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
