"""Print the Kernel field table (every field, its value in each preset, and
its kernel origin) from the installed schedlab, as the docs site's
"Kernel fields" page shows it. The site generates that page at build time
from the same function (scripts/dev/docs_tables.py), so there is nothing to
paste anywhere; tests/api/test_docs_tables.py checks it lists every field.

    python scripts/dev/kernel_fields_table.py
"""

from docs_tables import kernel_fields_table

if __name__ == "__main__":
    print(kernel_fields_table(), end="")
