# Two commands do everything on a fresh machine with only Python:
#   make demo   -- set up .venv, render a map and play a short random game
#   make test   -- set up .venv and run the test suite (what CI runs)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-slow bench tournament clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m caledonia_env demo

test: $(STAMP)
	$(PY) -m pytest

test-slow: $(STAMP)
	$(PY) -m pytest -m slow

# make tournament PLAYERS=mcts,greedy GAMES=20 WORKERS=2
PLAYERS ?= greedy,random,random,random
GAMES   ?= 200
WORKERS ?= 2
tournament: $(STAMP)
	$(PY) -m caledonia_env play --players $(PLAYERS) --games $(GAMES) --workers $(WORKERS) \
		--out tournament.csv

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
