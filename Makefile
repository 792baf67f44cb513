# Two entry points: `make demo` and `make test`. Both create .venv, install the
# local CPU build of torch first (an unpinned torch would pull CUDA wheels),
# then the package with every optional extra, all at the tested versions in
# constraints.txt (`make lock` refreshes it from the package's ranges).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install demo test bench lock clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/pip install -q -c constraints.txt torch==2.13.0
	$(BIN)/pip install -q -c constraints.txt -e '.[all,test]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/domainsift demo --out demo-out

# one pytest-xdist worker per core, at most 4 (each holds its own torch); the tests that start a Ray
# cluster run in one of them (tests/conftest.py); `$(BIN)/python -m pytest tests` runs them in one process
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)

test: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup tests

# the benchmarks behind the README's figures, at today's defaults (hours on 2 cores; each resumes);
# `python bench/live/selection.py` with no --methods reruns every variant ever measured
bench: install
	$(BIN)/pip install -q -c constraints.txt -e '.[all,bench]'
	$(BIN)/python bench/live/int8_recipes.py
	$(BIN)/python bench/live/reproducible.py
	$(BIN)/python bench/live/clustering.py
	$(BIN)/python bench/live/selection.py --methods cosine-default moore-lewis random dsir finetune-default \
	    finetune-default+moore-lewis cosine-default+moore-lewis
	for s in 1 2; do $(BIN)/python bench/live/selection.py --seed $$s --methods moore-lewis random finetune-default \
	    finetune-default+moore-lewis || exit 1; done
	$(BIN)/python bench/live/crosslingual.py --methods crosslingual crosslingual-no-align
	$(BIN)/python bench/live/negatives_pools.py
	$(BIN)/python bench/live/surface.py --finetune

# resolve the package's ranges anew in a throw-away environment and pin what it got
lock:
	rm -rf .lock-venv
	$(PY) -m venv .lock-venv
	.lock-venv/bin/pip install -q --upgrade pip
	.lock-venv/bin/pip install -q torch==2.13.0
	.lock-venv/bin/pip install -q -e '.[all,test,bench]'
	{ sed -n '1,3p' constraints.txt; .lock-venv/bin/pip freeze --exclude-editable | sed 's/+cpu$$//'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) demo-out build *.egg-info src/*.egg-info
