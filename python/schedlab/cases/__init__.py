"""The seed cases as reusable definitions: the runs, the seed's own numbers
and the comparison tables the demo, the notebooks and the tests share.

- ``cases.volano``: case 1, VolanoMark on 2.6.37-rc1 (its names are also
  available here, as before).
- ``cases.idle_balance``: case 2, the 2013 ``idle_balance()`` removal RFC.
"""

from . import idle_balance, volano
from .idle_balance import (
    EFFECT_COUNTERS,
    IDLE_BALANCE_SEED,
    format_idle_balance,
    idle_balance_comparison,
    idle_balance_runs,
    perf_stat_pair,
    removal_effect,
)
from .volano import (
    VOLANO_KERNELS,
    VOLANO_SEED,
    CaseInterrupted,
    CaseRunFailed,
    format_comparison,
    runs_frame,
    seed_vmstat_table,
    volano_comparison,
    volano_runs,
)

__all__ = [
    "EFFECT_COUNTERS",
    "IDLE_BALANCE_SEED",
    "VOLANO_KERNELS",
    "VOLANO_SEED",
    "CaseInterrupted",
    "CaseRunFailed",
    "format_comparison",
    "format_idle_balance",
    "idle_balance",
    "idle_balance_comparison",
    "idle_balance_runs",
    "perf_stat_pair",
    "removal_effect",
    "runs_frame",
    "seed_vmstat_table",
    "volano",
    "volano_comparison",
    "volano_runs",
]
