# rummyzoo: `make demo` runs the main job, `make test` runs the whole test suite.
# Both set up the virtual environment first (CPU torch wheel, then the project).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup browser demo test lint bench screenshots clean

# PyTorch's CPU builds: PyPI's Linux wheel of torch pulls the CUDA libraries (several GB), and the
# CPU build (2.13.0+cpu) ranks above it where this index is reachable (a local wheel serves too).
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu

$(STAMP): pyproject.toml setup.py envs/_native.c envs/_kernel.c envs/_knock.c envs/_ditch.c envs/_rummy500.c envs/_native.h
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --retries 1 --extra-index-url $(TORCH_CPU_INDEX) torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

# Ray RLlib (the rllib extra), for the rllib backend and its tests.
RLLIB_STAMP := $(VENV)/.installed-rllib
$(RLLIB_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev,rllib]"
	touch $(RLLIB_STAMP)

# The main job: a seeded game, a few minutes of training of the default config (Knock Rummy,
# 2 players, MaskablePPO), then the checkpoint against random play and the Knock heuristics.
# (30 of the default config's PPO rollouts of 64 games x 32 steps: a run trains whole rollouts)
DEMO_STEPS ?= 61440
demo: setup
	$(BIN)/rummyzoo demo knock_rummy --players 2 --seed 0
	rm -rf runs/demo
	$(BIN)/rummyzoo train configs/knock_ppo.yaml --run-dir runs/demo --set n_timesteps=$(DEMO_STEPS)
	$(BIN)/rummyzoo evaluate runs/demo/checkpoints/best.rz --deals 500 --json results/demo_evaluation.json

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Headless Chromium and its driver from the system packages, for the browser tests (skipped,
# with the reason printed, where they cannot be installed).
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing chromium and chromium-driver (apt-get)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium chromium-driver >/dev/null) || echo "could not install chromium: the browser tests will be skipped (they fail where RUMMYZOO_REQUIRE_BROWSER=1)"; \
	else echo "no chromium and no root apt-get: the browser tests will be skipped (they fail where RUMMYZOO_REQUIRE_BROWSER=1)"; fi

# The suite runs twice: with the compiled kernels (where they were built), then on the pure-Python
# code that an install without a C compiler runs. The second pass runs the rules, the vector
# engine, the agents, the arena and the training of every shipped config, and leaves out the Ray
# RLlib tests and the layers above the rules (marked above_rules: run folders and resumes,
# worker splits, plugins, pages, CLI screens, benchmarks), which reach the kernels only through
# the envs; the kernels and their Python code are compared directly (tests/test_native.py,
# tests/test_vector.py and the rules' tests in both passes).
test: lint browser $(RLLIB_STAMP)
	RUMMYZOO_REQUIRE_RLLIB=1 $(BIN)/python -m pytest -q -n 2 -p no:cacheprovider
	RUMMYZOO_PURE_PYTHON=1 $(BIN)/python -m pytest -q -n 2 -p no:cacheprovider -m 'not rllib and not above_rules'

bench: setup
	@for v in $$($(BIN)/python -c "from rummyzoo.envs.registry import VARIANTS; print(' '.join(VARIANTS))"); do \
		$(BIN)/rummyzoo bench-env $$v --players 2 --seconds 2 --repeat 5 \
			--json results/bench_$$v.json || exit 1; \
		$(BIN)/rummyzoo bench-env $$v --players 2 --seconds 2 --repeat 5 --num-envs 256 \
			--json results/bench_vector_$$v.json || exit 1; done
	$(BIN)/rummyzoo bench-train configs/knock_bench.yaml --steps 16384 --repeat 2 \
		--compare "vec_env=batched n_envs=64 hyperparams.n_steps=32" \
		--compare "vec_env=batched n_envs=64 hyperparams.n_steps=32 hyperparams.batch_size=512" \
		--json results/bench_train_knock.json

# Screenshots of the demo run's dashboard, replay page and a game in the browser (docs/screenshots).
screenshots: setup browser
	$(BIN)/python -m rummyzoo.cli.browser runs/demo docs/screenshots

clean:
	rm -rf $(VENV) results .pytest_cache .hypothesis
