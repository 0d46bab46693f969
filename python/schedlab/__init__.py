"""schedlab — a fast, deterministic model of the Linux CFS scheduler and its
load balancing, for sweeping scheduler tunables from Python.

>>> import schedlab as sl
>>> r = sl.simulate("vm-2", "v3.8", sl.workloads.spinners(nice=[0, 0, 5]), duration_s=0.1)
>>> r.status
'ok'
"""

from __future__ import annotations

from . import exceptions, plot, workloads
from ._core import __version__, build_profile
from .analysis.bisection import bisect
from .analysis.frames import compare, summarize
from .analysis.latency import format_latency
from .analysis.lkp import LKP_METRICS, LKP_NOT_MODELLED, format_lkp, lkp_metrics
from .analysis.perf_stat import format_perf_stat
from .analysis.schedule import (
    compare_schedule,
    parent_wakee_flips,
    schedule_samples,
    schedule_stats,
)
from .config import CostModel, Kernel, Machine
from .exceptions import ConfigError, ConfigTypeError, MeasureError, SchedlabError, SimulationError
from .groups import Group
from .host.calibration import Calibration, calibrate
from .host.measurement import measure
from .host.rtapp import compare_replay, compare_rt_app, measure_rt_app, record_schedule
from .host.validation import Validation, validate
from .io.spec import load_spec, run_spec
from .io.vmstat import format_vmstat, vmstat_table
from .result import Result, metric_info
from .run.execute import SweepInterrupted
from .run.plan import derive_seed
from .run.simulation import simulate
from .run.sweeps import sweep
from .workloads import Workload, workload_info

__all__ = [
    "__version__",
    "bisect",
    "build_profile",
    "calibrate",
    "Calibration",
    "ConfigError",
    "Group",
    "ConfigTypeError",
    "CostModel",
    "Kernel",
    "Machine",
    "Result",
    "SchedlabError",
    "SimulationError",
    "SweepInterrupted",
    "Workload",
    "compare",
    "compare_replay",
    "compare_schedule",
    "compare_rt_app",
    "derive_seed",
    "exceptions",
    "format_latency",
    "format_lkp",
    "lkp_metrics",
    "LKP_METRICS",
    "LKP_NOT_MODELLED",
    "format_perf_stat",
    "format_vmstat",
    "load_spec",
    "measure",
    "measure_rt_app",
    "metric_info",
    "record_schedule",
    "MeasureError",
    "parent_wakee_flips",
    "plot",
    "run_spec",
    "schedule_samples",
    "schedule_stats",
    "simulate",
    "summarize",
    "sweep",
    "validate",
    "Validation",
    "vmstat_table",
    "workload_info",
    "workloads",
]
