"""The SSD store's working files (Note [Tables on disk], src/embedding/mapped.h): named after
their owner, so that the files a killed process left behind are removed by the next table made
in the same directory on the same machine (they are never reopened: snapshots are the durable
state, and the files of a process killed mid-step may hold half a step)."""
import os
import re
import socket
import tempfile

_HOST = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "host"
# rows-<name>-<host>.<pid>-<random>.bin, and the per-row files beside it (.keys, .state), the key
# index's runs (.index.run<n>, Note [Index on disk]); also .slots<n>, the index files that builds
# before the index moved to memory left behind
_FILE = re.compile(r"^rows-.*-(?P<host>[A-Za-z0-9_]+)\.(?P<pid>\d+)-[A-Za-z0-9_]+\.bin(\.(keys|state|slots\d+|index\.run\d+))?$")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (another user's process: alive)
        return True
    return True


def remove_dead(directory):
    """Removes the working files of processes of this machine that no longer run."""
    for f in os.listdir(directory):
        m = _FILE.match(f)
        if m and m["host"] == _HOST and int(m["pid"]) != os.getpid() and not _alive(int(m["pid"])):
            try:
                os.unlink(os.path.join(directory, f))
            except FileNotFoundError:  # (another process cleaning at the same time)
                pass


def new_rows_file(directory, embedding_name):
    """A fresh rows file for a table (its keys and flags files take its name plus a suffix)."""
    os.makedirs(directory, exist_ok=True)
    remove_dead(directory)
    prefix = "rows-" + re.sub(r"[^A-Za-z0-9_.-]", "_", embedding_name) + f"-{_HOST}.{os.getpid()}-"
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=".bin", dir=directory)
    os.close(fd)
    return path
