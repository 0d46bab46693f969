#!/usr/bin/env bash
# The core/binding discipline (docs/development.md): only src/bindings/ may use pyo3 or numpy.
# The scheduler/workload boundary: nothing under src/sched/ may use the
# workload interface (crate::workload); the system-call layer that interprets
# workload actions is src/engine/syscall.rs.
set -euo pipefail
cd "$(dirname "$0")/../.."
if grep -rnE '\b(pyo3|numpy)::' src --include='*.rs' | grep -v '^src/bindings/'; then
    echo "error: pyo3/numpy used outside src/bindings/" >&2
    exit 1
fi
if grep -rnE '\bcrate::workload\b|\bsuper::super::workload\b' src/sched --include='*.rs'; then
    echo "error: src/sched/ uses crate::workload (the workload interface belongs to src/engine/syscall.rs)" >&2
    exit 1
fi
echo "binding boundary ok"
