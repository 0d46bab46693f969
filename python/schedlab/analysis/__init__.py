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

The public names are in ``schedlab`` (``sl.summarize``, …) and in these
modules; the package itself imports none of them, so a module that the
analysis reads (``schedlab.result``) can import the one it needs without a
circle.
"""

__all__: list[str] = []
