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

The public names are in ``schedlab`` (``sl.summarize``, …), in these
modules and, loaded on first use, here; the package imports none of its
modules when it is imported, so a module that the analysis reads
(``schedlab.result``) can import the one it needs without a circle.
"""

from __future__ import annotations

from .._lazy import lazy_names

#: The names the package gave before its modules stopped being imported
#: with it, and the module each lives in: still ``schedlab.analysis.<name>``, loaded
#: on first use (so importing a module of this package never imports the
#: others).
_LAZY = {
    "LKP_METRICS": "lkp",
    "LKP_NOT_MODELLED": "lkp",
    "bisect": "bisection",
    "compare": "frames",
    "format_latency": "latency",
    "format_lkp": "lkp",
    "format_perf_stat": "perf_stat",
    "lkp_metrics": "lkp",
    "metric_columns": "frames",
    "summarize": "frames",
}

__all__ = [
    "LKP_METRICS",
    "LKP_NOT_MODELLED",
    "bisect",
    "compare",
    "format_latency",
    "format_lkp",
    "format_perf_stat",
    "lkp_metrics",
    "metric_columns",
    "summarize",
]


__getattr__ = lazy_names(__name__, _LAZY)
