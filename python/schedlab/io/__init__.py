"""Results in and out of files and text, a module per format —

- ``pftrace``: a run's schedule as a Perfetto trace: ftrace event bundles,
  a process tree, counter and balancer tracks (``Result.to_perfetto``);
- ``ftrace``: the same events as the kernel's ftrace text, the ``trace``
  file's layout (``Result.to_ftrace``);
- ``events``: the event model both exports share (``sched_events``);
- ``atomic``: the atomic writer both use, and the tables' writers
  (``output``);
- ``vmstat``: vmstat-style tables of several runs (``vmstat_table``,
  ``format_vmstat``);
- ``spec``: sweep specs in TOML (``load_spec``, ``run_spec``; the CLI's
  ``schedlab sweep``);
- ``replay``, ``rtapp``, ``script``: recorded traces, rt-app JSON and
  scripted tasks read into workloads.

The public names are in ``schedlab`` (``sl.load_spec``, …) and in these
modules; the package itself imports none of them, so ``schedlab.result``
imports the exports it calls without a circle.
"""

__all__: list[str] = []
