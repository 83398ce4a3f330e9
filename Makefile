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
DEMO_GPT_STEPS ?= 200
DEMO_CHAT_STEPS ?= 1000

ifneq ($(wildcard ../shared/data),)
export TRACEGRAD_DATA ?= $(abspath ../shared/data)
endif
# Matplotlib must never try to open a window in a test or a headless demo.
export MPLBACKEND ?= Agg

.PHONY: demo test chapters bench setup dot clean

# The tour: every stage once, each through the command a reader would type, into runs/demo/
# (the committed figures/ and chapters/logs/ stay as they are); it ends with the files written.
DEMO := runs/demo
demo: setup
	@rm -rf $(DEMO) && mkdir -p $(DEMO) && touch $(DEMO)/.start
	@echo "== 1/5 stage1: BobNet, a scalar autograd graph trained and rendered"
	TRACEGRAD_FIGURES=$(DEMO)/figures TRACEGRAD_LOGS=$(DEMO)/logs $(PY) -m stage1_scalargrad.examples.bobnet
	@echo "== 2/5 MNIST on the native engine (device cpu): the thesis's 60,000 SGD steps"
	$(PY) -m stage4_models.mnist train --optim sgd --steps 60000 --out $(DEMO)/mnist
	@echo "== 3/5 names: the MLP language model, briefly trained, then sampled"
	$(PY) -m stage4_models.names train --steps 20000 --out $(DEMO)/names
	$(PY) -m stage4_models.names sample --checkpoint $(DEMO)/names/checkpoint.tg -n 10
	@echo "== 4/5 a character GPT on tiny-shakespeare (block 128), briefly trained, then sampled"
	$(PY) -m stage4_models.gpt train --config chat-base --block-size 128 --steps $(DEMO_GPT_STEPS) \
	    --eval-interval 100 --final-eval-batches 20 --out $(DEMO)/gpt
	$(PY) -m stage4_models.gpt sample --checkpoint $(DEMO)/gpt/checkpoint.tg --prompt "ROMEO:" --tokens 200 --temperature 0.8
	@echo "== 5/5 the chatbot: that GPT fine-tuned on the college conversations (a short run:"
	@echo "   the full recipe, python -m stage4_models.chat train, is chapter 10's), then asked"
	$(PY) -m stage4_models.chat train --base $(DEMO)/gpt/checkpoint.tg --steps $(DEMO_CHAT_STEPS) \
	    --eval-limit 30 --out $(DEMO)/chat
	@echo "-- a training question:"
	$(PY) -m stage4_models.chat --checkpoint $(DEMO)/chat/checkpoint.tg --ask "When does the library open?"
	@echo "-- a held-out paraphrase, never seen in training:"
	$(PY) -m stage4_models.chat --checkpoint $(DEMO)/chat/checkpoint.tg --ask "How much does the dormitory cost?"
	@echo "== files written by the tour:"
	@find $(DEMO) -type f -newer $(DEMO)/.start | sort

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
	$(PY) benchmarks/gpt.py

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
