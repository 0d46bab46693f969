"""Every reference in the repository points at something a user has.

Scans every text file of the repository (``git ls-files``: tracked plus
untracked-but-not-ignored; without git, a walk of the tree) and fails, naming
``file:line``, on

(a) a mention of the project's private working notes, which users do not
    have (the names in ``_PRIVATE``), and
(b) a repository-relative path that does not exist in the repository: a
    path under one of the top-level directories (``docs/…``, ``src/…``,
    ``tests/…``, ``scripts/…``, ``notebooks/…``, ``python/…``, ``benches/…``,
    ``examples/…``, ``.ci/…``) in code, comments, docstrings, notebooks and
    docs;
    a ``tests/<file>.py::<name>`` whose name is not defined in that file; and
    a relative Markdown link in ``README.md`` or ``docs/`` whose target does
    not exist (pages the docs build generates count as existing).

One test per file, so a failure names its file. No network, no import of
the package; about a second.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Never scanned: build output, the built site, and the hidden directories
# tools write at the root (.git, .venv*, .hypothesis, caches) but .ci.
_SKIP_TOP = ("target", "site", "dist", "bench-out")


def _skipped(rel: str) -> bool:
    top, _, rest = rel.partition("/")
    hidden_dir = bool(rest) and top.startswith(".") and top != ".ci"
    return top in _SKIP_TOP or hidden_dir or "__pycache__" in rel


def _repo_files() -> list[str]:
    """The repository's files, as POSIX paths relative to ROOT."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others"]
            + ["--exclude-standard"],
            capture_output=True,
            check=True,
        ).stdout
        files = [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(ROOT):
            rel_dir = Path(dirpath).relative_to(ROOT).as_posix()
            prefix = "" if rel_dir == "." else f"{rel_dir}/"
            dirnames[:] = [d for d in dirnames if not _skipped(f"{prefix}{d}/-")]
            for name in filenames:
                files.append(name if rel_dir == "." else f"{rel_dir}/{name}")
    return sorted(f for f in files if not _skipped(f) and (ROOT / f).is_file())


FILES = _repo_files()
EXISTING = set(FILES)
DIRS = {str(p) for f in FILES for p in PurePosixPath(f).parents if str(p) != "."}

# Pages the docs build writes itself (scripts/dev/gen_docs_pages.py, a
# mkdocs-gen-files script): they exist on the site, not in the tree.
GEN_SCRIPT = "scripts/dev/gen_docs_pages.py"
GENERATED = {
    "docs/index.md",  # the README
    "docs/reference/kernel-fields.md",
    "docs/reference/presets.md",
    "docs/reference/costs.md",
    "docs/reference/metrics.md",
    "docs/reference/workload-parameters.md",
} | {f"docs/{f}" for f in FILES if f.startswith("notebooks/") and f.endswith(".ipynb")}
GENERATED_DIRS = {"docs/reference", "docs/notebooks"}


def _exists(path: str) -> bool:
    path = path.rstrip("/")
    return path in EXISTING or path in DIRS or path in GENERATED or path in GENERATED_DIRS


def _text(rel: str) -> str | None:
    """The file's text, or None for a binary file."""
    data = (ROOT / rel).read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# (a) The private working notes. Each name is written so that this file's
# own source does not match it (a character class, an escaped dot).
_PRIVATE = re.compile(
    "|".join(
        [
            r"DESIGN\.md",
            r"kernel-fact[s]",
            r"cases-3-[4]",
            r"seed-case[s]\.md",
            r"ecosystem\.md",
            r"reference/workloads\.md",
            # that note cited bare, by section (the name, then a section sign):
            r"(?<![\w/.-])workloads\.md\s*§",
            r"\.\./share[d]",
            r"shared/referenc[e]",
            # the notes' tags for the kernel copies they read (2.6.36, 3.8, ...)
            r"\bK3[468]-(?:F|C|FEAT|RT|\*)",
            r"\bTOPO-3[17]\b",
            r"research[ ]note",
        ]
    )
)

# (b) Repository-relative paths. A path starts a word (after a space, quote,
# backtick, bracket, '=' or ',') so that the tail of a URL
# (https://github.com/x/y/src/z.c) is not taken for one, and is made of
# the characters of the repository's file names; it ends before any other
# character, so a glob (src/workload/*.rs) or an ellipsis (docs/….md)
# leaves only its directory part, which is checked as a directory.
_TOP = r"(?:docs|src|tests|scripts|notebooks|python|benches|examples|\.ci)"
_PATH = re.compile(r"(?:^|(?<=[\s`'\"(\[<=,|*]))(?:\./)?(" + _TOP + r"/[\w.\-/]*)(::\w+)?")
# A file of another project is not ours: cited, on the same line, as
# `owner/repo: path` or `some-repo: path` (osdl-aim-7: src/driver.c,
# jgneff/volano: src/COM/...) or after the project's name in the possessive
# (LKP's tests/hackbench).
_EXTERNAL_PREFIX = re.compile(r"(?:(?:[\w.-]+/[\w.-]+|[\w.]*-[\w.-]*):\s*|\b[A-Z][\w-]*'s\s+)`?$")
# Paths that are not in the tree on purpose, each with the reason. Keep this
# short: a path that should exist belongs in the tree, a typo does not
# belong here.
_NOT_OURS = {
    "scripts/config": "the kernel tree's own script; scripts/realkernel/build.sh runs it there",
}

# Relative Markdown links: [text](target). Targets with a scheme, anchors
# within the page and mail links are not files.
_MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _python_names(rel: str) -> set[str]:
    text = (ROOT / rel).read_text(encoding="utf-8")
    return set(re.findall(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", text, re.M))


def _problems(rel: str, text: str) -> list[str]:
    out: list[str] = []
    markdown = rel.endswith(".md") and (rel == "README.md" or rel.startswith("docs/"))
    for no, line in enumerate(text.splitlines(), 1):
        m = _PRIVATE.search(line)
        if m:
            out.append(f"{rel}:{no}: cites the private notes ({m.group(0)!r}): {line.strip()}")
        for m in _PATH.finditer(line):
            path, member = m.group(1).rstrip(".-"), m.group(2)
            if _EXTERNAL_PREFIX.search(line[: m.start()]) or path in _NOT_OURS:
                continue
            if not _exists(path):
                out.append(f"{rel}:{no}: no such path {path!r}: {line.strip()}")
            elif member and path.endswith(".py") and path in EXISTING:
                if member[2:] not in _python_names(path):
                    out.append(f"{rel}:{no}: {path} defines no {member[2:]!r}: {line.strip()}")
        if markdown:
            for m in _MD_LINK.finditer(line):
                target = m.group(1).split("#", 1)[0]
                if not target or _SCHEME.match(target):
                    continue
                base = PurePosixPath(rel).parent
                resolved = os.path.normpath((base / target).as_posix())
                if not _exists(resolved):
                    out.append(f"{rel}:{no}: broken link {m.group(1)!r} (-> {resolved})")
    return out


TEXT_FILES = [f for f in FILES if f != "Cargo.lock"]  # Cargo.lock: registry checksums only


@pytest.mark.parametrize("rel", TEXT_FILES)
def test_references_resolve(rel: str) -> None:
    text = _text(rel)
    if text is None:
        pytest.skip("binary file")
    problems = _problems(rel, text)
    assert not problems, (
        f"{len(problems)} dangling reference(s) in {rel}:\n"
        + "\n".join(problems)
        + "\n(cite the kernel source, a commit, a page of docs/ or a paper; docs/sources.md)"
    )


def test_generated_pages_are_generated() -> None:
    """The pages counted as existing above are the ones the docs build writes."""
    script = (ROOT / GEN_SCRIPT).read_text(encoding="utf-8")
    for page in sorted(GENERATED):
        if page.startswith("docs/notebooks/"):
            assert 'f"notebooks/{nb.name}"' in script
        else:
            assert f'"{page.removeprefix("docs/")}"' in script, page


def test_the_check_sees_what_it_should() -> None:
    """The patterns catch what they are for and pass what they must pass."""
    bad = [
        "see ../" + "shared/notes.md",
        "(kernel-" + "facts §4.2)",
        "as reference/" + "workloads.md says",
        "workloads" + ".md §1",
        "docs/" + "no-such-page.md",
        "`src/" + "no_such_module.rs`",
        "tests/api/test_references.py::" + "no_such_test",
    ]
    good = [
        "https://github.com/torvalds/linux/blob/v6.6/src/x.c",
        "osdl-aim-7: `src/driver.c`",
        "LKP's tests/hackbench",
        "docs/guide/workloads.md and [Workloads](guide/workloads.md)",
        "src/workload/*.rs",
        "tests/api/test_references.py::test_the_check_sees_what_it_should",
    ]
    page = "docs/" + "a-page.md"  # where the lines are taken to stand
    for line in bad:
        assert _problems(page, line), line
    for line in good:
        assert not _problems(page, line), (line, _problems(page, line))
