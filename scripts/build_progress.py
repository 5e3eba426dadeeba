"""Condenses `pip install -v` of the C++ extension into a progress display.

scripts/setup.sh pipes the verbose install through this filter: the whole output goes to a log
file, and the terminal gets scikit-build-core's phase lines ("*** Configuring CMake...") and
ninja's `[n/N]` progress. The first build compiles a few hundred objects for minutes; under
`pip -q` it printed nothing and looked like a hang. On a terminal the progress is one updating
line; elsewhere (CI=true, a pipe, a log file) it is one line per ~10% so logs stay short.

Usage: pip install -v ... 2>&1 | python scripts/build_progress.py LOGFILE
Standard library only: it runs before anything else is installed.
"""

import os
import re
import sys

_NINJA = re.compile(r"^\[(\d+)/(\d+)\]\s*(.*)$")
# The object's source file in ninja's "Building CXX object CMakeFiles/x.dir/src/a/b.cpp.o".
_OBJECT = re.compile(r"(?:CXX|C) object \S*?\.dir/(\S+?)\.o$")


def _interactive(out) -> bool:
    ci = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")
    return out.isatty() and not ci


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.stdout
    live = _interactive(out)
    width = 100
    if live:
        try:
            width = os.get_terminal_size(out.fileno()).columns
        except OSError:
            pass
    next_pct = 0
    on_live_line = False
    pending = ""  # the latest progress line not printed (CI form)
    with open(sys.argv[1], "w", encoding="utf-8", errors="replace") as log:
        for raw in sys.stdin:
            log.write(raw)
            line = raw.strip()  # pip indents the backend's output
            m = _NINJA.match(line)
            if m:
                done, total, what = int(m.group(1)), int(m.group(2)), m.group(3)
                obj = _OBJECT.search(what)
                short = obj.group(1) if obj else what
                pct = 100 * done // max(total, 1)
                if live:
                    text = f"build [{done}/{total}] {pct:3d}% {short}"
                    out.write("\r\033[K" + text[: width - 1])
                    on_live_line = True
                elif done > 0:  # [0/N]: ninja re-checking its inputs
                    pending = f"build [{done}/{total}] {pct:3d}%\n"
                    if pct >= next_pct:
                        out.write(pending)
                        pending = ""
                        next_pct = (pct // 10 + 1) * 10
                out.flush()
                continue
            # Phase lines of scikit-build-core, and ninja's own verdicts ("no work to do", errors).
            if line.startswith("***") or line.startswith("ninja:") or line.startswith("FAILED:"):
                if on_live_line:
                    out.write("\n")
                    on_live_line = False
                out.write(pending + line + "\n")  # where the last step was (the final count)
                pending = ""
                out.flush()
                # A new ninja run (CMake regenerated its files) counts from 1 again.
                next_pct = 0
    out.write("\n" if on_live_line else pending)
    return 0


if __name__ == "__main__":
    sys.exit(main())
