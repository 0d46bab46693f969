# schedlab — build, test and benchmark entry points.
#   make test   install what the tests need, then run every check and test
#               (pytest also on CPython 3.10 and 3.13 from pyenv, in .venv-py310/.venv-py313)
#   make demo   install the package and run the built-in demo
#   make docs   install the package with the docs extra and serve the site (http://127.0.0.1:8000)
#   make docs-build  the docs extra for the installed package, then the strict build into site/
#   make readme the README's first command in a fresh venv, then its Quick start, verbatim
#   make notebooks  rerun the notebooks at full size, storing the outputs the docs site shows
#   make bench  engine benchmarks, the scaling bench (v3.8 and v6.18), instructions per event
#               (callgrind) and scripts/dev/bench.py, plain and v3.8 against v6.18 (not part of the tests)
PY ?= python3
PIP ?= $(PY) -m pip
WHEEL_DIR := dist
# Further CPythons (pyenv versions) that `make test` runs the tests on, with the same abi3 wheel.
EXTRA_PYS ?= 3.10 3.13
PYTEST_EXTRA := $(addprefix pytest-py,$(EXTRA_PYS))

.PHONY: test lint rust-test wheel install-test pytest pytest-extra $(PYTEST_EXTRA) stubtest docs-build docs readme notebooks demo bench clean

test: lint rust-test install-test stubtest docs-build readme pytest pytest-extra

lint:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features python -- -D warnings
	$(PIP) install --quiet "ruff>=0.5" "mypy>=1.10" types-tqdm
	$(PY) -m ruff check python tests scripts
	$(PY) -m ruff format --check python tests scripts
	./scripts/dev/check-binding-boundary.sh

rust-test:
	cargo test --release

wheel:
	$(PIP) install --quiet "maturin>=1.7,<2"
	rm -rf $(WHEEL_DIR)
	$(PY) -m maturin build --release -o $(WHEEL_DIR)

install-test: wheel
	$(PIP) install --quiet "$$(ls $(WHEEL_DIR)/schedlab-*.whl)[test]"
	$(PIP) install --quiet --force-reinstall --no-deps $(WHEEL_DIR)/schedlab-*.whl

stubtest:
	$(PY) -m mypy.stubtest schedlab._core --allowlist scripts/dev/stubtest-allowlist.txt
	$(PY) -m mypy

# The documentation site, strict (a broken link, a bad reference or a generated table out of
# step with the code fails), from the installed package (install-test's wheel) plus its docs
# extra: 'schedlab[docs]' takes schedlab as installed and adds the extra's packages, no build.
# MKDOCS_ENV silences two third-party banners (mkdocs-material's and a plugin's "MkDocs 2.0").
MKDOCS_ENV := NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true
docs-build:
	@$(PIP) show --quiet schedlab >/dev/null 2>&1 || { \
	  echo "error: schedlab is not installed: 'pip install .' or 'make install-test' first" >&2; exit 1; }
	$(PIP) install --quiet 'schedlab[docs]'
	$(MKDOCS_ENV) $(PY) -m mkdocs build --strict

docs: wheel
	$(PIP) install --quiet "$$(ls $(WHEEL_DIR)/schedlab-*.whl)[docs]"
	$(PIP) install --quiet --force-reinstall --no-deps $(WHEEL_DIR)/schedlab-*.whl
	$(MKDOCS_ENV) $(PY) -m mkdocs serve

# The README's first command, verbatim, with a fresh venv's pip (it builds from source; after
# `make wheel` cargo finds target/ up to date), then its Quick start block, verbatim, in a
# temporary directory.
readme:
	$(PY) scripts/dev/readme_check.py

# The notebooks' stored outputs (what the docs site shows), rerun at full size in place with
# NB_SMOKE unset; tests/api/test_docs_build.py fails when they are stale.
notebooks:
	$(PY) scripts/dev/run_notebooks.py

# Notebooks run at CI size (NB_SMOKE=1); unset it for the full-size story.
# Test files are spread over one pytest-xdist worker per core (a file stays on one worker, so its
# module fixtures run once); XDIST= runs them in one process.
XDIST ?= -n auto --dist loadfile
pytest:
	NB_SMOKE=1 $(PY) -m pytest -q $(XDIST) tests notebooks --nbmake --nbmake-timeout=600

# The tests (not the notebooks) on each of EXTRA_PYS, from the wheel already in $(WHEEL_DIR)
# (`make wheel` or `make install-test` builds it), each in its own venv .venv-py3NN.
# A missing interpreter is an error, not a skip.
pytest-extra: $(PYTEST_EXTRA)

$(PYTEST_EXTRA): pytest-py%:
	@set -e; \
	prefix=$$(pyenv prefix $* 2>/dev/null) || { \
	  echo "error: Python $* not found: 'pyenv prefix $*' failed (is pyenv on PATH and $* installed? 'pyenv install $*')" >&2; exit 1; }; \
	interp=$$prefix/bin/python; \
	[ -x "$$interp" ] || { echo "error: Python $*: $$interp is not executable" >&2; exit 1; }; \
	whl=$$(ls $(WHEEL_DIR)/schedlab-*-abi3-*.whl 2>/dev/null) || { \
	  echo "error: no abi3 wheel in $(WHEEL_DIR)/: run 'make wheel' first" >&2; exit 1; }; \
	venv=.venv-py$(subst .,,$*); \
	[ $$venv/bin/python -ef "$$interp" ] || { \
	  echo "creating $$venv from $$interp"; "$$interp" -m venv --clear $$venv; }; \
	$$venv/bin/python -m pip install --quiet "$$whl[test]"; \
	$$venv/bin/python -m pip install --quiet --force-reinstall --no-deps "$$whl"; \
	echo "pytest on $$($$venv/bin/python -V)"; \
	$$venv/bin/python -m pytest -q $(XDIST) -p no:cacheprovider tests

demo:
	$(PIP) install .
	schedlab demo

bench:
	cargo bench --bench engine
	cargo bench --bench scenarios
	cargo bench --bench scale -- --instructions
	cargo bench --bench instructions
	$(PY) scripts/dev/bench.py
	$(PY) scripts/dev/bench.py --compare v3.8,v6.18 --instructions

clean:
	rm -rf target $(WHEEL_DIR) site
