# Two commands do everything on a fresh machine with only Python:
#   make tournament -- set up .venv, run a 200-game bot tournament, print the tables
#   make test       -- set up .venv and run the test suite (what CI runs)
# Also: make demo (one random game + map.png), make test-slow, make clean.
# The venv gets the dev and train extras (torch pinned to the CPU build 2.13.0).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-slow bench tournament clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e ".[dev,train]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m caledonia_env demo

test: $(STAMP)
	$(PY) -m pytest

test-slow: $(STAMP)
	$(PY) -m pytest -m slow

# make tournament PLAYERS=mcts,greedy GAMES=20 WORKERS=2 CLANS=none
PLAYERS ?= greedy,random,random,random
GAMES   ?= 200
WORKERS ?= 2
CLANS   ?= draft
tournament: $(STAMP)
	$(PY) -m caledonia_env play --players $(PLAYERS) --games $(GAMES) --workers $(WORKERS) \
		--clans $(CLANS) --out tournament.csv

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
