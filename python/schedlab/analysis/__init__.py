"""Reading results, a module per job —

- ``frames``: ``summarize``, ``compare`` and ``metric_columns`` of result or
  sweep frames;
- ``lkp``: the 0-day (LKP) report's metric names and table
  (``lkp_metrics``, ``format_lkp``);
- ``perf_stat``: runs rendered like ``perf stat -r N`` (``format_perf_stat``);
- ``bisect``: which kernel fields carry a change in a metric;
- ``stats``: the statistics they use, from ``scipy.stats``.

The public names are re-exported by ``schedlab`` (``sl.summarize``, …).
"""
