# Two commands do everything on a fresh machine with only Python:
#   make tournament -- set up .venv (core install only), run a 200-game bot tournament
#   make test       -- set up .venv with the extras and run the test suite (what CI runs)
# Also: make demo (one random game + map.png, core only), make serve (browser app),
# make test-slow, make clean.
# The core install is `pip install -e .` (numpy, numba, gymnasium, pettingzoo, matplotlib,
# tqdm). `make test` adds the extras in EXTRAS; a new extra goes there (e.g. EXTRAS=dev,train,web).
# The train extra pins torch==2.13.0: without a GPU, install the CPU build first (README).
PYTHON ?= python3
VENV   ?= .venv
EXTRAS ?= dev,train,web,ray
PY     := $(VENV)/bin/python
comma  := ,
CORE   := $(VENV)/.installed-core
FULL   := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: demo test test-slow tournament serve browser clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

# pip compiles the installed packages' bytecode one file at a time. The core's is written
# after it on every core (compileall -j 0; quietly and whatever it returns: a few test files
# of the dependencies are not valid on this Python, which pip skips the same way). The
# extras' files are not compiled ahead: the tests import only a small part of them, and
# `make test` writes the bytecode of what they import as they first import it (see `test`).
SITE = $$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')

$(CORE): pyproject.toml | $(PY)
	$(PY) -m pip install --no-compile -e .
	$(PY) -m compileall -qq -j 0 "$(SITE)" || true
	touch $@

$(FULL): pyproject.toml | $(PY)
	$(PY) -m pip install --no-compile -e ".[$(EXTRAS)]"
	touch $@ $(CORE)

demo: $(CORE)
	$(PY) -m caledonia_env demo

# The browser tests (tests/web/test_web_browser.py) drive Debian's chromium; `browser` installs
# it with apt-get when missing. Where it cannot be installed, those tests are skipped and
# pytest prints the reason (never silently).
browser:
	-sh scripts/install_browser.sh

# Parallel test workers (pytest-xdist; tests/conftest.py fills numba's cache once before they
# start, and they share it by path); TEST_WORKERS=0 runs the tests in one process.
# The suite starts many Python processes: they write the bytecode of what they import
# (PYTHONDONTWRITEBYTECODE emptied; the gitignored __pycache__ folders and the venv's), else
# each would compile the sources it imports again.
TEST_WORKERS ?= auto
TEST_ENV     := PYTHONDONTWRITEBYTECODE=
test: $(FULL) browser
	$(TEST_ENV) $(PY) -m pytest -rs -n $(TEST_WORKERS) --dist loadfile

test-slow: $(FULL)
	$(TEST_ENV) $(PY) -m pytest -m slow -n $(TEST_WORKERS) --dist loadfile

# make tournament PLAYERS=mcts,greedy GAMES=20 WORKERS=2 CLANS=none
PLAYERS ?= greedy,random,random,random
GAMES   ?= 200
WORKERS ?= 2
CLANS   ?= draft
tournament: $(CORE)
	$(PY) -m caledonia_env play --players $(PLAYERS) --games $(GAMES) --workers $(WORKERS) \
		--clans $(CLANS) --out tournament.csv

serve: $(FULL)
	$(PY) -m caledonia_env serve

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
