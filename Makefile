# icefloe: the README's commands.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
export SPARK_LOCAL_IP ?= 127.0.0.1
export PYARROW_IGNORE_TIMEZONE ?= 1

.PHONY: install demo test bench clean

install: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m connector.demo

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m tests.bench.run

clean:
	rm -rf $(VENV) demo-work bench-work .pytest_cache .hypothesis *.egg-info
