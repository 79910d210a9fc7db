# make test  : create .venv (Python 3.9-3.11), install t2t with its test extra, run the tests.
# make demo  : same setup, then datagen -> train (transformer_tiny, 2,000 steps) -> evaluate ->
#              greedy decode of the dev set on algorithmic_reverse_binary40_test (scripts/demo.sh).
# make bench : same setup, then the benchmarks in bench/ (figures printed and written to bench/results/).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_DIR ?= /tmp/t2t_demo

.PHONY: test demo bench setup clean
setup: $(STAMP)

$(VENV)/bin/python:
	@PYBIN=""; for c in python3.11 python3.10 python3.9 python3 python; do \
	  if command -v $$c >/dev/null 2>&1 && $$c -c 'import sys; sys.exit(0 if (3,9) <= sys.version_info[:2] <= (3,11) else 1)'; then PYBIN=$$c; break; fi; \
	done; \
	if [ -z "$$PYBIN" ]; then echo "error: t2t needs Python 3.9, 3.10 or 3.11 (TensorFlow 2.15 has no wheel for newer Pythons); install one, e.g. 'apt-get install python3.11-venv' or pyenv, and rerun" >&2; exit 1; fi; \
	echo "creating $(VENV) with $$PYBIN ($$($$PYBIN --version))"; \
	$$PYBIN -m venv $(VENV)

$(STAMP): $(VENV)/bin/python setup.py
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q tests

demo: $(STAMP)
	@bash scripts/demo.sh $(DEMO_DIR)

bench: $(STAMP)
	@set -e; for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b; done

clean:
	rm -rf $(VENV) build *.egg-info
