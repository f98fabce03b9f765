# One command each for install, run, test, lint and the lockfile. `make help` lists them.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The share cards' fonts (web/cards/fonts.py): every script and colour emoji.
FONTS := fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji

# Test processes (pytest-xdist). The tests mostly wait on servers, databases and sleeps, so
# more processes than cores pays; `make test TEST_WORKERS=0` runs them in this one process.
TEST_WORKERS ?= 4

LOCALE := src/anonbox/locale
LANGS := ja ko id es
# Each catalog's compiled form, rebuilt by run/test when its .po is newer (a merged translation).
MO := $(patsubst %.po,%.mo,$(wildcard $(LOCALE)/*/LC_MESSAGES/messages.po))

.DEFAULT_GOAL := help
.PHONY: help install fonts run test lint format lock clean bench messages compile-messages

help: ## List the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(BIN)/pybabel -q compile -d $(LOCALE) -D messages
	@touch $(STAMP)

install: $(STAMP) $(MO) fonts ## Create .venv and install the project from the lockfile (compile the catalogs and, as root, install the cards' fonts)

# As root on Debian, apt-get installs whichever of the fonts is missing; anyone else gets a
# line saying what the cards lack (they still draw, with DejaVu Sans or Pillow's font).
fonts: ## Install the share cards' Noto fonts if missing (as root, with apt-get)
	@missing=$$(for p in $(FONTS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update && apt-get install -y --no-install-recommends $$missing; \
	else echo "make: the share cards want" $$missing "(apt-get install, as root); without them they draw with DejaVu Sans" >&2; fi

# Where `make run` listens: `make run PORT=8080`, `make run HOST=0.0.0.0` (every interface).
HOST ?= 127.0.0.1
PORT ?= 8000

run: $(STAMP) $(MO) fonts ## Serve on http://127.0.0.1:8000, or HOST= and PORT= (SQLite in ./anonbox.db unless ANONBOX_DATABASE_URL is set)
	$(BIN)/anonbox serve --host '$(HOST)' --port '$(PORT)'

# The suite starts its Python processes with bytecode caching on, even where the environment
# turns it off (PYTHONDONTWRITEBYTECODE): each test process, its servers' fork server and
# each tool it runs would otherwise compile anonbox, the tests and pytest's rewritten
# asserts from source again (collection alone: 6.2 CPU-seconds a process, 2.3 with the
# caches). The caches go to __pycache__/, which git ignores.
test: $(STAMP) $(MO) fonts ## Run the whole test suite (SQLite always; PostgreSQL when reachable, required with CI=true); as root, installs Chromium and the cards' fonts if missing
	@[ -x /usr/bin/chromium-headless-shell ] || [ "$$(id -u)" != 0 ] || (apt-get update && apt-get install -y chromium-headless-shell)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

lint: $(STAMP) ## ruff, mypy --strict and the layers (import-linter: [tool.importlinter] in pyproject.toml)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy
	$(BIN)/lint-imports

format: $(STAMP) ## Apply ruff's formatting and safe fixes
	$(BIN)/ruff format src tests
	$(BIN)/ruff check --fix src tests

# The image's two locks take their pins from requirements.lock (-c), so the image runs
# exactly the versions the tests ran: requirements-runtime.lock is it without the dev
# extra, deploy/requirements-build.lock the build backend (hatchling) the Dockerfile uses.
lock: $(STAMP) ## Re-pin requirements.lock from pyproject.toml, then the image's locks from it
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --generate-hashes --python-version 3.11 --universal -o requirements.lock
	$(BIN)/uv pip compile pyproject.toml -c requirements.lock --generate-hashes --python-version 3.11 --universal -o requirements-runtime.lock
	$(BIN)/uv pip compile deploy/build-requirements.in -c requirements.lock --generate-hashes --python-version 3.11 --universal -o deploy/requirements-build.lock

bench: $(STAMP) ## Run the benchmarks against the floor (BENCH_ARGS="--quick --db sqlite"); installs wrk and bench/requirements.lock
	@command -v wrk >/dev/null || (apt-get update && apt-get install -y wrk)
	@[ -x /usr/sbin/pgbouncer ] || [ "$$(id -u)" != 0 ] || (apt-get update && apt-get install -y pgbouncer)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r bench/requirements.lock
	$(BIN)/python bench/run.py $(BENCH_ARGS)

messages: $(STAMP) ## Extract marked texts to the .pot and merge them into every catalog (.po)
	$(BIN)/pybabel extract -F babel.cfg -k N_ --sort-by-file --no-wrap -o $(LOCALE)/messages.pot .
	@for lang in $(LANGS); do \
	  if [ -f $(LOCALE)/$$lang/LC_MESSAGES/messages.po ]; then \
	    $(BIN)/pybabel -q update --no-wrap -i $(LOCALE)/messages.pot -d $(LOCALE) -D messages -l $$lang; \
	  else \
	    $(BIN)/pybabel -q init --no-wrap -i $(LOCALE)/messages.pot -d $(LOCALE) -D messages -l $$lang; \
	  fi; \
	done

$(LOCALE)/%/LC_MESSAGES/messages.mo: $(LOCALE)/%/LC_MESSAGES/messages.po | $(STAMP)
	$(BIN)/pybabel -q compile -i $< -o $@

compile-messages: $(STAMP) ## Compile the catalogs (.po) to the .mo files the service reads
	$(BIN)/pybabel -q compile -d $(LOCALE) -D messages

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
