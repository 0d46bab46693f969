"""Print the README's Kernel field table (between the kernel-fields markers)
from the installed schedlab: every field, its value in each preset, and its
kernel origin. tests/test_typing.py checks the README lists every field.

    python scripts/dev/kernel_fields_table.py
"""

import schedlab as sl


def main() -> None:
    presets = sl.Kernel.presets()
    ks = [sl.Kernel.preset(p) for p in presets]
    print("| field | " + " | ".join(presets) + " | kernel change | meaning |")
    print("|---" * (len(presets) + 3) + "|")
    for r in sl.Kernel.info().iter_rows(named=True):
        f = r["field"]
        vals = [str(getattr(k, f)) for k in ks]
        if r["commit"]:
            origin = f"{r['commit']} ({r['release']})"
        else:
            origin = r["release"] or r["kind"]
        if r["kind"] == "change" and not r["verified"]:
            origin += " ?"
        print(f"| `{f}` | " + " | ".join(vals) + f" | {origin} | {r['doc']} |")


if __name__ == "__main__":
    main()
