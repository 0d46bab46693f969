"""Fixed runs for counting the engine's instructions with callgrind (deterministic,
unlike wall time on a shared VM):

    valgrind --tool=callgrind python scripts/dev/callgrind_runs.py import
    valgrind --tool=callgrind python scripts/dev/callgrind_runs.py run

The difference of the two totals is the runs' work.
"""

import sys

import schedlab as sl

if sys.argv[1:] == ["run"]:
    volano = sl.workloads.volano(rooms=10, users=20, messages=20)
    for k in ("v2.6.37-rc1", "v3.8"):
        sl.simulate("core2-2s", k, volano, seed=1)
    hb = sl.workloads.hackbench(groups=56, loops=20, ipc="pipe", mode="thread")
    sl.simulate("skl-sp-2s", "v3.8", hb, seed=1)
