"""Running the model: one configuration (``simulate``) or a grid of them ×
replicates in parallel (``sweep``), a module per job —

- ``simulation``: ``simulate``, one run, as a ``Result``;
- ``sweeps``: ``sweep``, planned by ``plan`` and run by ``execute``;
- ``args``: the machine, kernel, costs and workload arguments, checked;
- ``grid``: a sweep's grid checked, expanded and each point resolved;
- ``plan``: per-run seeds (``derive_seed``) and the planners;
- ``execute``: local or executor execution, chunks, checkpointing as runs
  finish, progress and Ctrl-C's salvage (``SweepInterrupted``);
- ``checkpoint``: the Parquet checkpoint, written and checked on resume;
- ``frame``: result rows' configuration columns, their dtypes, the frame;
- ``estimate``: what a sweep will cost, before it starts (the CLI's header).

The public names are here and in ``schedlab`` (``sl.simulate``,
``sl.sweep``, ``sl.SweepInterrupted``, ``sl.derive_seed``).
"""

from .execute import SweepInterrupted
from .plan import derive_seed
from .simulation import simulate
from .sweeps import sweep

__all__ = ["simulate", "sweep", "derive_seed", "SweepInterrupted"]
