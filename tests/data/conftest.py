"""A real pyiceberg SQL catalog on SQLite in a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.catalog import Catalog, load_catalog


def make_catalog(root: Path, name: str = "t") -> Catalog:
    return load_catalog(name, type="sql", uri=f"sqlite:///{root}/cat.db", warehouse=f"file://{root}/wh")


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    cat = make_catalog(tmp_path)
    cat.create_namespace("db")
    return cat
