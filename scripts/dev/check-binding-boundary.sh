#!/usr/bin/env bash
# The layering checks (`make lint`):
# - The core/binding discipline: only src/bindings/ may use pyo3 or numpy
#   (the pure-Rust core builds and tests without Python; docs/development.md).
# - The scheduler/workload boundary: no model code under src/sched/ may use
#   the workload interface (crate::workload); the system-call layer that
#   interprets workload actions is src/engine/syscall.rs. Exempt: the
#   scheduler's whole-run test modules (src/sched/**/*_tests.rs, each
#   declared under #[cfg(test)] in its directory's mod.rs), which drive runs
#   with workloads.
# - The scheduler/engine boundary: the scheduler reaches the event queue only
#   through its hooks (src/sched/hooks.rs, which declares the scheduler's
#   events). No other file under src/sched/, test modules included, may name
#   the event queue (EventQueue, crate::queue), the Event type or the
#   `events` field that holds the queue; and no model file under src/sched/,
#   hooks.rs included, may use the engine (crate::engine). A whole-run test
#   module may use crate::engine to build and run a Sim.
# - No import circle between the scheduler's rooms (src/sched/fair, balance,
#   rt, group, stats and its top-level files) or between the crate's
#   top-level modules: scripts/dev/check_module_cycles.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
fail=0
if grep -rnE '\b(pyo3|numpy)::' src --include='*.rs' | grep -v '^src/bindings/'; then
    echo "error: pyo3/numpy used outside src/bindings/" >&2
    fail=1
fi
# Test modules under src/sched/ must be compiled for tests only.
while IFS= read -r f; do
    m=$(basename "$f" .rs)
    parent="$(dirname "$f")/mod.rs"
    if ! grep -B1 -E "^mod ${m};" "$parent" | grep -q '^#\[cfg(test)\]' &&
        ! grep -h -B1 -E "^#\[path = \"${m}.rs\"\]" "$(dirname "$f")"/*.rs | grep -q '^#\[cfg(test)\]'; then
        echo "error: $f is not declared as '#[cfg(test)] mod ${m};' in $parent (or '#[cfg(test)] #[path = \"${m}.rs\"] mod tests;' beside it)" >&2
        fail=1
    fi
done < <(find src/sched -name '*_tests.rs' | sort)
model_files=$(find src/sched -name '*.rs' ! -name '*_tests.rs' | sort)
# shellcheck disable=SC2086
if grep -nE '\bcrate::workload\b|\bsuper::super::workload\b' $model_files; then
    echo "error: src/sched/ uses crate::workload (the workload interface belongs to src/engine/syscall.rs)" >&2
    fail=1
fi
non_hook_files=$(find src/sched -name '*.rs' ! -path src/sched/hooks.rs | sort)
# shellcheck disable=SC2086
if grep -nE '\bEventQueue\b|\bcrate::queue\b|\bEvent\b|\.events\b' $non_hook_files; then
    echo "error: src/sched/ touches the event queue outside src/sched/hooks.rs (post events through its hooks)" >&2
    fail=1
fi
# shellcheck disable=SC2086
if grep -nE '\bcrate::engine\b|\bsuper::super::engine\b' $(find src/sched -name '*.rs' ! -name '*_tests.rs' | sort); then
    echo "error: src/sched/ uses crate::engine (the scheduler posts its events through its hooks' queue; the engine pops it)" >&2
    fail=1
fi
if ! python3 scripts/dev/check_module_cycles.py; then
    fail=1
fi
if [ "$fail" -ne 0 ]; then
    exit 1
fi
echo "binding boundary ok"
