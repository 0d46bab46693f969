"""mkdocs-gen-files script (mkdocs.yml): the reference pages generated from
the code at build time, and the notebooks copied in for mkdocs-jupyter.

- reference/kernel-fields.md, reference/presets.md, reference/costs.md,
  reference/metrics.md, reference/workload-parameters.md from
  scripts/dev/docs_tables.py (the installed schedlab's fields and presets);
- notebooks/*.ipynb, rendered with their stored outputs (execute: false);
- index.md: the README, its links made relative to the site.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mkdocs_gen_files

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

import docs_tables as t  # noqa: E402

KERNEL_FIELDS = """# Kernel fields

Every `Kernel` field, its value in each preset, and the change it models,
generated from `Kernel.info()` and the presets when the site is built
(`python scripts/dev/kernel_fields_table.py` prints the same table). A `?`
marks a commit id or release not confirmed from a public source — recalled
and to be checked against the kernel's history; a `~` release is inferred
from the commit's date. Times in ns.

"""

PRESETS = """# Presets

Generated from the code when the site is built.

## Machines

`Machine.preset(name)`: sockets × cores per socket × threads per core.
CPUs are numbered so that SMT siblings are adjacent.

{machines}
## Kernels

`Kernel.preset(name)`; each preset is a list of field settings
([Kernel fields](kernel-fields.md)), so any single change can be flipped on
its own (`sl.bisect`).

{kernels}"""

COSTS = """# Costs

What the model charges, in ns: `CostModel(**changes)`, `.replace(...)`,
`CostModel.preset(machine)` (what `simulate` uses when `costs=None`; the
"machine presets" column lists where a machine's preset differs from the
default). Generated from the code when the site is built; the
[Cost model guide](../guide/costs.md) says where the values come from.

"""

with mkdocs_gen_files.open("reference/kernel-fields.md", "w") as f:
    f.write(KERNEL_FIELDS + t.kernel_fields_table())
with mkdocs_gen_files.open("reference/presets.md", "w") as f:
    f.write(PRESETS.format(machines=t.machine_presets_table(), kernels=t.kernel_presets_table()))
with mkdocs_gen_files.open("reference/costs.md", "w") as f:
    f.write(COSTS + t.cost_table())

METRICS = """# Metrics

Every metric a run reports in `Result.metrics` (and a sweep's frame as
columns), generated from the core's declaration when the site is built:
`sl.metric_info()` returns the same table as a DataFrame. A name with a
`<placeholder>` is one metric per C-state or per group. A run reports the
families in the order below, except that a workload's own metrics
(hackbench's messages and throughput, schbench's percentiles, …) come
between the trace's and the power model's; they are described with the
workload ([Workloads](../guide/workloads.md)).

"""

with mkdocs_gen_files.open("reference/metrics.md", "w") as f:
    f.write(METRICS + t.metric_table())

WORKLOAD_PARAMETERS = """# Workload parameters

Every argument of each `sl.workloads.<kind>` builder (and of
`sl.workloads.rt_kthreads`, the component hackbench takes as
`rt_kthreads=`), generated from the
core's declaration (`src/workload/params.rs`) when the site is built:
`sl.workload_info()` returns the same table as a DataFrame, and
`Workload.parameters(kind)` a kind's names. The core checks the same
bounds as the builder. An argument the builder takes in another unit than
the core (µs for ns) is shown in the builder's unit, with the core's key
it becomes; the core's own errors about it name that key and say its range
in the core's unit. The [Workloads guide](../guide/workloads.md) describes each
workload and its metrics.

"""

with mkdocs_gen_files.open("reference/workload-parameters.md", "w") as f:
    f.write(WORKLOAD_PARAMETERS + t.workload_param_table())

readme = (ROOT / "README.md").read_text()
readme = readme.replace("](docs/", "](").replace(
    "`notebooks/00-tutorial.ipynb` walks through all of it.",
    "The [tutorial notebook](notebooks/00-tutorial.ipynb) walks through all of it.",
)
with mkdocs_gen_files.open("index.md", "w") as f:
    f.write(readme)

for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
    with mkdocs_gen_files.open(f"notebooks/{nb.name}", "wb") as f:
        f.write(nb.read_bytes())
