# Two commands for a fresh machine: `make run` and `make test`. Both create .venv and install gobblin_py
# with its dev extra when the environment is missing or older than pyproject.toml.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
GPY := $(VENV)/bin/gpy
STAMP := $(VENV)/.installed
WORK := work

.PHONY: run test install clean

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	@rm -rf $(WORK)/sample-state
	$(PY) scripts/sample_state_store.py $(WORK)/sample-state
	$(GPY) state show $(WORK)/sample-state

test: $(STAMP)
	$(PY) -m pytest

clean:
	rm -rf $(VENV) $(WORK) .pytest_cache .hypothesis
