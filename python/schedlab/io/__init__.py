"""Results in and out of files and text, a module per format —

- ``pftrace``: a run's schedule as a Perfetto trace: ftrace event bundles,
  a process tree, counter and balancer tracks (``Result.to_perfetto``);
- ``ftrace``: the same events as the kernel's ftrace text, the ``trace``
  file's layout (``Result.to_ftrace``); both write atomically
  (``ftrace.atomic_output``);
- ``vmstat``: vmstat-style tables of several runs (``vmstat_table``,
  ``format_vmstat``);
- ``spec``: sweep specs in TOML (``load_spec``, ``run_spec``; the CLI's
  ``schedlab sweep``).

The public names are here and in ``schedlab`` (``sl.load_spec``, …).
"""

from .spec import load_spec, run_spec
from .vmstat import format_vmstat, vmstat_table

__all__ = ["format_vmstat", "load_spec", "run_spec", "vmstat_table"]
