# schedlab — build, test and benchmark entry points.
#   make test   install what the tests need, then run every check and test
#   make demo   install the package and run the built-in demo
#   make bench  engine benchmarks and python -m schedlab.bench (not part of the tests)
PY ?= python3
PIP ?= $(PY) -m pip
WHEEL_DIR := dist

.PHONY: test lint rust-test wheel install-test pytest stubtest demo bench clean

test: lint rust-test install-test stubtest pytest

lint:
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features python -- -D warnings
	$(PIP) install --quiet "ruff>=0.5" "mypy>=1.10" types-tqdm
	$(PY) -m ruff check python tests scripts
	$(PY) -m ruff format --check python tests scripts
	./scripts/check-binding-boundary.sh

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
	$(PY) -m mypy.stubtest schedlab._core --allowlist scripts/stubtest-allowlist.txt
	$(PY) -m mypy

# Notebooks run at CI size (NB_SMOKE=1); unset it for the full-size story.
pytest:
	NB_SMOKE=1 $(PY) -m pytest -q tests notebooks --nbmake --nbmake-timeout=600

demo:
	$(PIP) install .
	schedlab demo

bench:
	cargo bench --bench engine
	cargo bench --bench scenarios
	$(PY) -m schedlab.bench

clean:
	rm -rf target $(WHEEL_DIR)
