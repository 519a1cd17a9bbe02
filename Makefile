# `make run` and `make test` set everything up on a fresh machine (idempotently), then run.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TORCH_WHEEL ?= torch==2.13.0
EXTRAS ?= train,pettingzoo,plots,sb3,web,ray,docs,openspiel,rlcard,dev

.PHONY: run test lint format docs docs-serve bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# Torch first, pinned: the CPU wheel on this machine installs in seconds; a bare `torch`
# requirement would pull a multi-GB CUDA build.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet $(TORCH_WHEEL)
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $(STAMP)

# A tournament of the seven bundled bots, each once, search:fast included (duplicate, 4 matches
# a pairing, 2 processes; on the 2-core machine 51 s at load 0.7-1.4, 2 min 36 s shared with
# others at load 3.2-4.1, measured 2026-12-07/08) ending with a leaderboard that fits 120 columns; results in
# runs/tournament/ (a rerun starts afresh: --overwrite).
run: $(STAMP)
	$(VENV)/bin/fourhundred tournament --config configs/tournament_default.yaml --overwrite

test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The manual (mkdocs.yml, docs/): built into site/; --strict makes a broken link, a missing
# reference or any other warning an error. The generated tables come from the code
# (docs/gen_pages.py, a hook of the build). NO_MKDOCS_2_WARNING: Material's end-of-life banner.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# The manual at http://127.0.0.1:8000/, rebuilt on every edit (Ctrl-C stops)
docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --strict --dev-addr 127.0.0.1:8000

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/engine_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .ruff_cache build site *.egg-info
	find fourhundred_env agents -name '*.nb[ic]' -delete  # numba's compiled kernels
