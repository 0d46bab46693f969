"""Add two scheduler features to a Linux 6.1 source tree (Debian's
linux-source-6.1), for checking the model's newidle-balancing cases on a
real kernel:

- ``NEWIDLE_BALANCE`` (default on): off skips ``sched_balance_newidle()``
  entirely, as the 2013 RFC "The removal of idle_balance()" did.
- ``NEWIDLE_THROTTLE_38`` (default off): on replaces 6.1's throttles
  (``rd->overload``, ``max_newidle_lb_cost``) by 3.8's single test,
  ``avg_idle < sysctl_sched_migration_cost``.

Both are toggled at run time through ``/sys/kernel/debug/sched/features``
(with ``NO_NI_RANDOM`` as well, for 3.8's behaviour). Idempotent; exits
non-zero naming the anchor it could not find.

Usage: python patch_sched.py LINUX_SOURCE_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

MARK = "schedlab experiment"

FEATURES = f"""
/* {MARK}: off skips newidle balancing (2013 RFC "The removal of idle_balance()"). */
SCHED_FEAT(NEWIDLE_BALANCE, true)
/* {MARK}: 3.8's newidle throttle, avg_idle < sysctl_sched_migration_cost only. */
SCHED_FEAT(NEWIDLE_THROTTLE_38, false)
"""

# (anchor in fair.c, replacement). Each anchor must occur exactly once.
FAIR_EDITS = [
    (
        "\tif (!READ_ONCE(this_rq->rd->overload) ||\n"
        "\t    this_rq->avg_idle < sd->max_newidle_lb_cost) {",
        f"\t/* {MARK} */\n"
        "\tif (!sched_feat(NEWIDLE_BALANCE) ||\n"
        "\t    (sched_feat(NEWIDLE_THROTTLE_38) ?\n"
        "\t     this_rq->avg_idle < sysctl_sched_migration_cost :\n"
        "\t     (!READ_ONCE(this_rq->rd->overload) ||\n"
        "\t      this_rq->avg_idle < sd->max_newidle_lb_cost))) {",
    ),
    (
        "\t\tif (this_rq->avg_idle < curr_cost + sd->max_newidle_lb_cost)\n\t\t\tbreak;",
        f"\t\t/* {MARK} */\n"
        "\t\tif (!sched_feat(NEWIDLE_THROTTLE_38) &&\n"
        "\t\t    this_rq->avg_idle < curr_cost + sd->max_newidle_lb_cost)\n"
        "\t\t\tbreak;",
    ),
]


def patch(src: Path) -> None:
    features = src / "kernel/sched/features.h"
    fair = src / "kernel/sched/fair.c"
    for f in (features, fair):
        if not f.is_file():
            sys.exit(f"patch_sched: {f} not found; is {src} a Linux 6.1 source tree?")
    text = fair.read_text()
    if MARK in text:
        print("patch_sched: already patched")
        return
    for anchor, replacement in FAIR_EDITS:
        n = text.count(anchor)
        if n != 1:
            sys.exit(f"patch_sched: anchor found {n} times in fair.c (want 1):\n{anchor}")
        text = text.replace(anchor, replacement)
    fair.write_text(text)
    features.write_text(features.read_text() + FEATURES)
    print("patch_sched: added NEWIDLE_BALANCE and NEWIDLE_THROTTLE_38")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    patch(Path(sys.argv[1]))
