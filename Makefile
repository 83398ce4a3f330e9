# The whole set-up is two commands: `make demo` and `make test` (see README.md); `make lab`
# opens the chapter notebooks. Each creates .venv when missing, installs the project into it,
# makes sure graphviz's `dot` exists and points TRACEGRAD_DATA at ../shared/data when that
# folder is there.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# `make test STAGE=stage1` runs one stage's tests (pytest markers stage1..stage4, chapters).
STAGE  ?=
PYTEST_ARGS ?=
DEMO_GPT_STEPS ?= 200
DEMO_CHAT_STEPS ?= 1000
# `make lab LAB_ARGS="--no-browser --port 8890"`: JupyterLab's own options.
LAB_ARGS ?=

ifneq ($(wildcard ../shared/data),)
export TRACEGRAD_DATA ?= $(abspath ../shared/data)
endif
# Matplotlib must never try to open a window in a test or a headless demo.
export MPLBACKEND ?= Agg
# Python caches compiled modules (__pycache__) even where the environment says not to: each
# test worker, notebook kernel and command a test runs would compile every module again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-slow lab chapters bench sanitize clang-check setup dot clang clean

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

# chapters/freshness.py warns (never fails) about notebooks whose saved outputs predate
# changes to the package sources they load, as `make chapters` recorded them.
#
# pytest-xdist spreads the tests over every core (XDIST=0: one process, as `pdb` needs);
# worksteal hands a worker that finishes early tests from a busy one's queue, so the
# long notebooks do not leave a core idle at the end. The workers already fill the cores,
# so a kernel's idle OpenMP threads sleep (passive) instead of spinning against them, and
# each worker's kernels run on one thread (a parallel kernel would wait for a core the
# other worker holds); the tests of threaded paths set their threads themselves (the
# `threads` fixture, tests/conftest.py).
XDIST ?= auto
PYTEST := OMP_WAIT_POLICY=passive $(if $(filter 0,$(XDIST)),,TRACEGRAD_NUM_THREADS=1) $(PY) -m pytest \
          $(if $(filter 0,$(XDIST)),,-n $(XDIST) --dist worksteal)
test: setup
	$(VENV)/bin/ruff check .
	$(PY) chapters/freshness.py
	$(PYTEST) $(if $(STAGE),-m $(STAGE)) $(PYTEST_ARGS)

# The tests make test leaves out to keep its budget (tests/conftest.py, SlowTests): those
# marked slow (the chapter notebooks among them: `make test-slow STAGE=chapters`) and the
# CUDA checks (the CUDA kernels on "cuda-emu", nvcc's build of them). .ci/run runs them
# after make test.
test-slow: setup
	$(PYTEST) -m "slow$(if $(STAGE), and $(STAGE))" $(PYTEST_ARGS)

# The chapter notebooks in JupyterLab, on this venv: its python3 kernel is the venv's Python
# (ipykernel is installed there, with the project; JUPYTER_PATH puts the venv's kernel spec
# before one a user may have installed), and it inherits TRACEGRAD_DATA from here.
lab: setup
	JUPYTER_PATH=$(abspath $(VENV))/share/jupyter$${JUPYTER_PATH:+:$$JUPYTER_PATH} \
	    $(VENV)/bin/jupyter lab --notebook-dir=chapters $(LAB_ARGS)

# Runs every chapter notebook in full mode, rewriting its figures/ and chapters/logs/, and
# records in each notebook the commit and the hashes of the sources it loaded (freshness).
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

# The tests of the C kernels, for make sanitize and make clang-check: stage3's tests but
# CUDA's, and the shared suites' cases on "cpu" and "cpu:lazy". Each target builds its
# library in a copy of the tree ($(call copy_tree,FOLDER): no library there yet), so the
# normal one is never touched, and its fused kernels in a cache of its own. Fewer
# hypothesis examples than make test's: these targets check how the kernels are compiled,
# which a few examples per property reach as well. The tests spread over the cores as make
# test's do (XDIST).
NATIVE_TESTS := $(filter-out tests/test_stage3_cuda%,$(wildcard tests/test_stage3_*.py))
FUSED_TESTS := $(addprefix tests/test_stage3_,codegen.py fusion.py rows.py plan_cache.py epilogue.py lazy.py lazy_draw.py)
SHARED_SUITES := tests/test_ops.py tests/test_dags.py tests/test_stage2_optim.py tests/test_stage2_nn.py \
    tests/test_boundary.py tests/test_stage2_edge_cases.py tests/test_stage2_grad_mode.py tests/test_stage2_serialization.py \
    tests/test_indexing.py
copy_tree = rm -rf $(1) && mkdir -p $(1) && \
    cp -R stage1_scalargrad stage2_tensor stage3_native stage4_models benchmarks tests pyproject.toml $(1)/ && \
    rm -f $(1)/stage3_native/_native*.so
native_env = TRACEGRAD_HYPOTHESIS_EXAMPLES=10 TRACEGRAD_KERNEL_CACHE=$(abspath $(1))/kernels OMP_WAIT_POLICY=passive
NATIVE_PYTEST := -m pytest -p no:cacheprovider -q $(if $(filter 0,$(XDIST)),,-n $(XDIST) --dist worksteal)

# The tests of csrc/'s kernels on a C library built with AddressSanitizer and
# UndefinedBehaviorSanitizer (TRACEGRAD_SANITIZE, stage3_native/build.py): the native tests
# but the fused kernels' (FUSED_TESTS, and the shared suites' "cpu:lazy" cases: each test
# there compiles kernels of its own, and with the checks in that takes most of the time;
# make sanitize SANITIZE_FUSED=1 runs them too). An out-of-bounds access, a use after free,
# a signed overflow or other undefined behaviour stops the run with a report. Python is not
# built with ASan, so its runtime is preloaded (with libstdc++: matplotlib throws C++
# exceptions, which ASan must intercept from the start); CPython keeps memory until exit by
# design, so leak checks are off.
# --capture=sys: pytest keeps Python's output, the reports reach the terminal. Left out: the
# test that memory goes back to the system, which ASan holds in quarantine on purpose (to
# catch a use after free).
SANITIZE_DIR := build/sanitize
SANITIZE_FUSED ?=
SANITIZE_RUN := cd $(SANITIZE_DIR) && $(call native_env,$(SANITIZE_DIR)) TRACEGRAD_SANITIZE=1 \
    LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libstdc++.so)" \
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    $(abspath $(PY)) $(NATIVE_PYTEST) --capture=sys $(PYTEST_ARGS)
sanitize: setup
	$(call copy_tree,$(SANITIZE_DIR))
	cd $(SANITIZE_DIR) && TRACEGRAD_SANITIZE=1 TRACEGRAD_NATIVE_BUILDING=1 $(abspath $(PY)) -m stage3_native.build
	$(SANITIZE_RUN) -k "not cuda and not memory_is_freed" $(if $(SANITIZE_FUSED),$(NATIVE_TESTS),$(filter-out $(FUSED_TESTS),$(NATIVE_TESTS)))
	$(SANITIZE_RUN) -k "cpu and not cuda$(if $(SANITIZE_FUSED),, and not lazy)" $(SHARED_SUITES)

# A learner's Mac: Apple's clang, which has no OpenMP, and one SIMD level (simd.h's
# "generic"). Debian's clang stands in for it, without OpenMP even where libomp is
# installed (TRACEGRAD_OPENMP=0), warnings as errors; the fused kernels of "cpu:lazy" are
# compiled by clang too (CC). Before the tests, the library says how it was built: by clang
# (its .comment section), on one thread, at one SIMD level.
CLANG_DIR := build/clang
CLANG_ENV := $(call native_env,$(CLANG_DIR)) CC=clang TRACEGRAD_OPENMP=0
CLANG_RUN := cd $(CLANG_DIR) && $(CLANG_ENV) $(abspath $(PY)) $(NATIVE_PYTEST) $(PYTEST_ARGS)
CLANG_SAYS := import stage3_native as s; from stage3_native.cpu import backend as b; s.set_num_threads(2); \
    print('threads:', s.get_num_threads(), '- SIMD levels:', b.simd_levels()); \
    assert s.get_num_threads() == 1 and b.simd_levels() == ('generic',), 'built with OpenMP or for several SIMD levels'
clang-check: setup clang
	$(call copy_tree,$(CLANG_DIR))
	cd $(CLANG_DIR) && $(CLANG_ENV) CFLAGS=-Werror TRACEGRAD_NATIVE_BUILDING=1 $(abspath $(PY)) -m stage3_native.build
	readelf -p .comment $(CLANG_DIR)/stage3_native/_native*.so | grep clang
	cd $(CLANG_DIR) && $(CLANG_ENV) $(abspath $(PY)) -c "$(CLANG_SAYS)"
	$(CLANG_RUN) -k "not cuda" $(NATIVE_TESTS)
	$(CLANG_RUN) -k "cpu and not cuda" $(SHARED_SUITES)

setup: $(STAMP) dot

# The package (its native build: compiling the kernels) and its dependencies (mostly
# unpacking) install side by side, in two pips: the first builds tracegrad alone
# (--no-deps), with the build requirements installed first (--no-build-isolation: no
# second environment to make), the second installs what pyproject.toml lists, tracegrad
# aside. --no-compile: Python compiles a module to bytecode when it is first imported; pip
# would compile every module of every package, most of which nothing here imports.
# (Python 3.10 has no tomllib; pip carries the library it grew from, tomli.)
READ_TOML := import importlib, sys; \
    toml = importlib.import_module('tomllib' if sys.version_info >= (3, 11) else 'pip._vendor.tomli'); \
    t = toml.load(open('pyproject.toml', 'rb'));
BUILD_REQUIRES := $(READ_TOML) print('\n'.join(t['build-system']['requires']))
DEPENDENCIES := $(READ_TOML) p = t['project']; print('\n'.join(p['dependencies'] + p['optional-dependencies']['dev']))
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -c "$(BUILD_REQUIRES)" > $(VENV)/build-requirements.txt
	$(PY) -c "$(DEPENDENCIES)" > $(VENV)/requirements.txt
	$(PY) -m pip install --quiet -r $(VENV)/build-requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e . & build=$$!; \
	  $(PY) -m pip install --quiet --no-compile -r $(VENV)/requirements.txt; deps=$$?; \
	  wait $$build && test $$deps = 0
	@touch $(STAMP)

# System packages, not Python ones: installed with apt-get when run as root, else the one
# command is printed. $(call system_package,COMMAND,PACKAGE,WHAT,THEN): THEN runs after that
# message (exit 1 where nothing can go on without it).
system_package = command -v $(1) >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $(2)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	  else \
	    echo "$(3) is missing; install it with:  sudo apt-get install $(2)"; $(4) \
	  fi; }

# clang, for make clang-check.
clang:
	@$(call system_package,clang,clang,clang,exit 1;)

# Graphviz's `dot` renders the autograd graphs (the tests that draw skip without it).
dot:
	@$(call system_package,dot,graphviz,graphviz's dot,)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
