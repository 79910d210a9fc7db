# make test  : create a venv for the chosen Python, install t2t with its test extra, run the tests.
# make demo  : create the venv, install t2t alone (no test extra), then datagen -> train
#              (transformer_tiny, 2,000 steps) -> evaluate -> greedy decode of the dev set on
#              algorithmic_reverse_binary40_test (scripts/demo.sh).
# make bench : as make test's setup, then the benchmarks in bench/ (figures printed and written to bench/results/).
# make docs  : install the docs extra into the venv, then build the documentation site into
#              site/ with `mkdocs build --strict` (a broken link or reference fails it).
# make check-package : install the release extra, then scripts/check_package.sh: build the
#              wheel and sdist, twine check, install the wheel into fresh 3.13 and 3.11 venvs
#              and run a small datagen -> train -> decode with the installed programs.
# Each install has its stamp in the venv (.installed-test, .installed-demo), so a venv made by
# `make demo` gets the test extra at the next `make test`.
#
# Which Python: PYTHON=<command, version or path> (e.g. PYTHON=python3.12, PYTHON=3.13);
# otherwise the newest supported one found on PATH or in pyenv's versions. Each Python gets
# its own venv, .venv-<major.minor>, so both stacks live side by side:
#   Python 3.9-3.11 -> TensorFlow 2.15 (Estimator and native backends)
#   Python 3.12+    -> TensorFlow 2.21 (native backend; see pyproject.toml)
# .venv links to the venv of the default choice (what `. .venv/bin/activate` in README activates).
#
# PREFER_NEW_STACK=0 keeps the old default choice (3.11, 3.10, 3.9: TensorFlow 2.15).
# TEST_WORKERS: pytest-xdist processes for `make test` (default: the CPU count, at most 4;
# each test file runs whole in one process, so its module fixtures are built once).
SHELL := /bin/bash
PREFER_NEW_STACK ?= 1
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)
ifeq ($(PREFER_NEW_STACK),1)
PY_CANDIDATES := 3.13 3.12 3.11 3.10 3.9
else
PY_CANDIDATES := 3.11 3.10 3.9
endif
ifeq ($(strip $(PYTHON)),)
PYBIN := $(shell bash scripts/find_python.sh $(PY_CANDIDATES))
LINK_DEFAULT := 1
else
PYBIN := $(shell bash scripts/find_python.sh $(PYTHON))
LINK_DEFAULT := 0
endif
PYVER := $(if $(PYBIN),$(shell $(PYBIN) -c 'import sys; print("%d.%d" % sys.version_info[:2])'))
VENV := .venv-$(PYVER)
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-test
DEMO_STAMP := $(VENV)/.installed-demo
DEMO_DIR ?= /tmp/t2t_demo

.PHONY: test demo bench setup docs check-package clean which-python
setup: $(STAMP)

which-python:
	@echo "$(PYBIN) (Python $(PYVER)) -> $(VENV)"

$(VENV)/bin/python:
	@if [ -z "$(PYBIN)" ]; then echo "error: no supported Python found$(if $(PYTHON), for PYTHON=$(PYTHON)) (looked for $(if $(PYTHON),$(PYTHON),$(PY_CANDIDATES)) on PATH and in pyenv); t2t needs Python 3.9-3.13: install one (e.g. 'apt-get install python3.11-venv' or pyenv) and rerun" >&2; exit 1; fi
	@$(PYBIN) -c 'import sys; sys.exit(0 if (3, 9) <= sys.version_info[:2] <= (3, 13) else 1)' || { echo "error: $(PYBIN) is Python $(PYVER); t2t needs Python 3.9-3.13 (3.9-3.11: TensorFlow 2.15; 3.12-3.13: TensorFlow 2.21)" >&2; exit 1; }
	@echo "creating $(VENV) with $(PYBIN) (Python $(PYVER))"
	$(PYBIN) -m venv $(VENV)

$(STAMP): $(VENV)/bin/python pyproject.toml
	@echo "installing t2t with its test extra into $(VENV) (TensorFlow, tensorflow-text, pytest, hypothesis, Apache Beam, TFDS, Optuna, TF Hub): ~2-3 min with pip's cache warm, longer on a first download"
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m pip check
	@touch $@
	@if [ "$(LINK_DEFAULT)" = 1 ] && { [ -L .venv ] || [ ! -e .venv ]; }; then ln -sfn $(VENV) .venv; fi

$(DEMO_STAMP): $(VENV)/bin/python pyproject.toml
	@echo "installing t2t into $(VENV) (TensorFlow, tensorflow-text, numpy, sentencepiece, sacrebleu, absl-py): ~1-2 min with pip's cache warm, longer on a first download"
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	$(PY) -m pip check
	@touch $@
	@if [ "$(LINK_DEFAULT)" = 1 ] && { [ -L .venv ] || [ ! -e .venv ]; }; then ln -sfn $(VENV) .venv; fi

test: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile tests

demo: $(DEMO_STAMP)
	@T2T_BIN=$(VENV)/bin bash scripts/demo.sh $(DEMO_DIR)

bench: $(STAMP)
	@set -e; for b in bench/bench_*.py; do echo "== $$b"; $(PY) $$b; done

# The docs and release extras go on top of the setup's install (by the distribution's name:
# pip adds only the extra's requirements to the installed t2t-toolkit).
$(VENV)/.docs-stamp: $(STAMP)
	$(PY) -m pip install -q 't2t-toolkit[docs]'
	@touch $@

# NO_MKDOCS_2_WARNING: Material's notice about its successor (see docs/index.md).
docs: $(VENV)/.docs-stamp
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

$(VENV)/.release-stamp: $(STAMP)
	$(PY) -m pip install -q 't2t-toolkit[release]'
	@touch $@

check-package: $(VENV)/.release-stamp
	bash scripts/check_package.sh $(PY)

clean:
	rm -rf .venv .venv-3.* build dist site *.egg-info
