"""Note [Resident cap] (src/core/allocator.cpp): the caching CPU allocator keeps free blocks, but
free large blocks give their pages back when the resident bytes would outgrow the most bytes ever
live at once (plus a sixteenth). Each case runs in a fresh process: the peak resident set and the
allocator's counters are per process."""
import functools
import json
import subprocess
import sys
import textwrap

MB = 2**20

# One fresh process runs both cases (an import is most of its time). First a loop that allocates the
# same four 8 MB blocks five times: the cached blocks serve it, the resident bytes stay at the
# peak of live bytes and nothing is given back. Then phase 1 holds 16 blocks of 8 MB (128 MB) and
# frees them: they stay cached, resident. Phase 2 holds 4 blocks of 40 MB (the 64 MB class, 160
# MB) which the cached 8 MB blocks cannot serve. Without the cap both would be resident at once
# (288 MB); with it, the peak of live bytes is 160 MB and the cap 170 MB, so at least 118 MB of the
# free blocks are given back.
SCRIPT = textwrap.dedent(
    """
    import json, resource
    import oneflow as flow
    from oneflow import _oneflow_internal as C

    def maxrss_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    flow.ones(1000).sum()  # warm: the library's own first allocations
    for _ in range(5):
        xs = [flow.ones(2 * 2**20) for _ in range(4)]  # 8 MB each
        del xs
    loop = C._cpu_allocator_stats()
    base = maxrss_mb()
    small = [flow.ones(2 * 2**20) for _ in range(16)]
    del small
    big = [flow.ones(10 * 2**20) for _ in range(4)]  # 40 MB each
    sums = [float(b.sum()) for b in big]
    del big
    again = [flow.full((2 * 2**20,), 3.0) for _ in range(16)]  # reuses the given-back blocks
    sums_again = [float(a.sum()) for a in again]
    print(json.dumps({"loop": loop, "growth_mb": maxrss_mb() - base, "stats": C._cpu_allocator_stats(),
                      "sums": sums, "sums_again": sums_again}))
    """
)


@functools.lru_cache(maxsize=None)
def _result():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_a_repeating_loop_gives_nothing_back():
    s = _result()["loop"]
    assert s["given_back"] == 0, s
    assert s["live_large"] == 0, s
    assert s["free_resident"] == s["peak_live_large"] == 4 * 8 * MB, s


def test_free_large_blocks_give_pages_back_above_the_peak_of_live_bytes():
    r = _result()
    s = r["stats"]
    assert s["peak_live_large"] == 160 * MB, s
    # at least the 118 MB over the cap went back
    assert s["given_back"] >= 118 * MB, s
    # the resident set grew by about the cap (170 MB), not by both phases (288 MB)
    assert r["growth_mb"] < 240, r
    # the given-back blocks stay cached and serve later requests with the right values
    assert r["sums"] == [10.0 * 2**20] * 4
    assert r["sums_again"] == [3.0 * 2 * 2**20] * 16
