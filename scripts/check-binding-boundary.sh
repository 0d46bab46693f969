#!/usr/bin/env bash
# The core/binding discipline (DESIGN.md): only src/bindings/ may use pyo3 or numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
if grep -rnE '\b(pyo3|numpy)::' src --include='*.rs' | grep -v '^src/bindings/'; then
    echo "error: pyo3/numpy used outside src/bindings/" >&2
    exit 1
fi
echo "binding boundary ok"
