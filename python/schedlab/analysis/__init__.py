"""Reading results, a module per job —

- ``frames``: ``summarize``, ``compare`` and ``metric_columns`` of result or
  sweep frames;
- ``lkp``: the 0-day (LKP) report's metric names and table
  (``lkp_metrics``, ``format_lkp``);
- ``perf_stat``: runs rendered like ``perf stat -r N`` (``format_perf_stat``);
- ``latency``: scheduling delays per task or group, as ``perf sched
  latency`` reports them (``Result.latency``, ``format_latency``);
- ``bisection``: which kernel fields carry a change in a metric (``bisect``);
- ``stats``: the statistics they use, from ``scipy.stats``.

The public names are here and in ``schedlab`` (``sl.summarize``, …).
"""

from .bisection import bisect
from .frames import compare, metric_columns, summarize
from .latency import format_latency
from .lkp import LKP_METRICS, LKP_NOT_MODELLED, format_lkp, lkp_metrics
from .perf_stat import format_perf_stat

__all__ = [
    "bisect",
    "compare",
    "format_latency",
    "format_lkp",
    "format_perf_stat",
    "lkp_metrics",
    "LKP_METRICS",
    "LKP_NOT_MODELLED",
    "metric_columns",
    "summarize",
]
