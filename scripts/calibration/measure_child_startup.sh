#!/usr/bin/env bash
# Evidence for CostModel.child_start_ns: page faults per perf-bench child
# (independent of the loop count, so start-up) and the cost of one
# copy-on-write fault on this machine. Needs gcc and perf.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -o "$tmp/cow_fault" "$here/child_startup/cow_fault.c"
"$tmp/cow_fault" 160 300
"$tmp/cow_fault" 1000 100
for args in "-g 10 -l 1" "-g 10 -l 100" "-g 10 -l 1 -t"; do
    faults=$(perf stat -x, -e page-faults -- perf bench sched messaging $args 2>&1 >/dev/null \
        | awk -F, '/page-faults/ {print $1}')
    echo "perf bench sched messaging $args: $faults page faults (400 workers)"
done
