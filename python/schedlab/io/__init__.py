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

The public names are in ``schedlab`` (``sl.load_spec``, …), in these
modules and, loaded on first use, here; the package imports none of its
modules when it is imported, so ``schedlab.result``
imports the exports it calls without a circle.
"""

from __future__ import annotations

from .._lazy import lazy_names

#: The names the package gave before its modules stopped being imported
#: with it, and the module each lives in: still ``schedlab.io.<name>``, loaded
#: on first use (so importing a module of this package never imports the
#: others).
_LAZY = {
    "format_vmstat": "vmstat",
    "load_spec": "spec",
    "run_spec": "spec",
    "vmstat_table": "vmstat",
}

__all__ = [
    "format_vmstat",
    "load_spec",
    "run_spec",
    "vmstat_table",
]


__getattr__ = lazy_names(__name__, _LAZY)
