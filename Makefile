# Two entry points, each doing its own set-up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev

.PHONY: run test system-deps lint typecheck bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[report,web]'
	touch $@

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(STAMP_RUN)

run: $(STAMP_RUN)
	$(BIN)/wanka compare traditional-512-a100 meta-24k-h100-roce

# the browser test needs Debian's chromium; CJK plot labels need a CJK font (installed when missing
# and apt-get is usable, e.g. as root in CI; otherwise that test skips and plots fall back to English)
system-deps:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
		echo "note: chromium not installed; the browser test will skip"; }
	@fc-list :lang=zh 2>/dev/null | grep -q . || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null) || \
		echo "note: no CJK font; plots use English labels"; }

test: $(STAMP_DEV) system-deps
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest

lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

bench: $(STAMP_DEV)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
