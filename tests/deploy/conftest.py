from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.deploy.fake_connect import ICEBERG_SINK, FakeWorker, RunningFake


@pytest.fixture
def fake_connect():
    with RunningFake(FakeWorker()) as running:
        yield running


@pytest.fixture
def configs(tmp_path: Path):
    """A directory of connector configs, written by ``configs.write(file, body)``."""
    return ConfigDir(tmp_path / "connectors")


class ConfigDir:
    def __init__(self, path: Path):
        self.path = path
        path.mkdir()

    def write(self, file: str, body: dict) -> Path:
        target = self.path / file
        target.write_text(json.dumps(body, indent=2))
        return target


def iceberg_config(topic: str, table: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": ICEBERG_SINK,
        "tasks.max": "2",
        "topics": topic,
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "iceberg.tables": table,
        "iceberg.catalog.type": "sql",
        "iceberg.catalog.uri": "sqlite:///icefloe-work/catalog.db",
        **extra,
    }
