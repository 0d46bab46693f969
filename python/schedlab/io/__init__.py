"""Results in and out of files and text, a module per format —

- ``pftrace``: a run's schedule as a Perfetto trace (``Result.to_perfetto``);
- ``vmstat``: vmstat-style tables of several runs (``vmstat_table``,
  ``format_vmstat``);
- ``spec``: sweep specs in TOML (``load_spec``, ``run_spec``; the CLI's
  ``schedlab sweep``).

The public names are here and in ``schedlab`` (``sl.load_spec``, …).
"""

from .spec import load_spec, run_spec
from .vmstat import format_vmstat, vmstat_table

__all__ = ["format_vmstat", "load_spec", "run_spec", "vmstat_table"]
