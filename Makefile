# The whole set-up is two commands: `make demo` and `make test` (see README.md).
# Both create .venv when missing, install the project into it, make sure graphviz's `dot`
# exists and point TRACEGRAD_DATA at ../shared/data when that folder is there.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# `make test STAGE=stage1` runs one stage's tests (pytest markers stage1..stage4, chapters).
STAGE  ?=
PYTEST_ARGS ?=

ifneq ($(wildcard ../shared/data),)
export TRACEGRAD_DATA ?= $(abspath ../shared/data)
endif
# Matplotlib must never try to open a window in a test or a headless demo.
export MPLBACKEND ?= Agg

.PHONY: demo test chapters bench setup dot clean

demo: setup
	$(PY) -m stage1_scalargrad.examples.bobnet
	$(PY) -m stage3_native.examples.mlp
	$(PY) -m stage4_models.mnist train --optim sgd --steps 60000 --out runs/sgd

test: setup
	$(PY) -m pytest $(if $(STAGE),-m $(STAGE)) $(PYTEST_ARGS)

# Runs every chapter notebook in full mode, rewriting its figures/ and chapters/logs/.
chapters: setup
	$(PY) chapters/run.py

bench: setup
	$(PY) benchmarks/stage1_scalar.py
	$(PY) benchmarks/stage2_tensor.py
	$(PY) benchmarks/stage3_native.py
	$(PY) benchmarks/training.py
	$(PY) benchmarks/gemm.py
	$(PY) benchmarks/elementwise.py
	$(PY) benchmarks/overhead.py
	$(PY) benchmarks/mnist.py
	$(PY) benchmarks/tokenizer.py

setup: $(STAMP) dot

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# Graphviz's `dot` renders the autograd graphs. It is a system package, not a Python one.
dot:
	@command -v dot >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing graphviz (for its dot command)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; \
	  else \
	    echo "graphviz's dot is missing; install it with:  sudo apt-get install graphviz"; \
	  fi; }

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
