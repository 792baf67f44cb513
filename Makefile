# Two entry points: `make demo` and `make test`. Both create .venv, install the
# local CPU build of torch first (an unpinned torch would pull CUDA wheels),
# then the package with every optional extra.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install demo test bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[all,test]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/domainsift demo --out demo-out

test: install
	$(BIN)/python -m pytest tests

bench: install
	$(BIN)/pip install -q -e '.[all,bench]'
	$(BIN)/python bench/clustering.py
	$(BIN)/python bench/selection.py
	$(BIN)/python bench/negatives_pools.py

clean:
	rm -rf $(VENV) demo-out build *.egg-info src/*.egg-info
