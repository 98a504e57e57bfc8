"""A Connect worker file brought as it is: what icefloe reads from it, and what it names as not used."""

from __future__ import annotations

import json
import logging

import pytest

from connector import cli
from connector.api.errors import ConfigException
from connector.commit.coordinator import Coordinator
from connector.config.sink_config import SinkConfig
from connector.config.worker_keys import not_used_notes, offset_flush_timeout_s
from connector.data.catalog import load_catalog
from tests.integration.harness import sink_props

# Kafka 3.9's config/connect-standalone.properties, comments left out, plugin.path set as its comment suggests
STOCK_STANDALONE = {
    "bootstrap.servers": "localhost:9092",
    "key.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "key.converter.schemas.enable": "true",
    "value.converter.schemas.enable": "true",
    "offset.storage.file.filename": "/tmp/connect.offsets",
    "offset.flush.interval.ms": "10000",
    "plugin.path": "/usr/local/share/java,/opt/connectors",
}


def test_the_stock_standalone_file_names_each_key_icefloe_does_not_use_and_why():
    notes = not_used_notes(STOCK_STANDALONE)

    assert [note.split(":")[0] for note in notes] == ["offset.flush.interval.ms", "offset.storage.file.filename",
                                                      "plugin.path"]
    assert "iceberg.control.commit.interval-ms" in notes[0]  # what sets how often instead
    assert "snapshot summaries" in notes[1] and "no jars are loaded" in notes[2]


def test_icefloe_run_says_them_once_at_start(tmp_path, caplog):
    worker = tmp_path / "worker.properties"
    worker.write_text("".join(f"{k}={v}\n" for k, v in STOCK_STANDALONE.items()))
    connector = tmp_path / "sink.json"
    props = sink_props("worker-keys", "t", "db.t", tmp_path)
    connector.write_text(json.dumps(props))
    args = cli._parser().parse_args(["run", "--worker", str(worker), str(connector)])

    with caplog.at_level(logging.WARNING):
        cli._load(args)

    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Worker property ")]
    assert [line.split(":")[0] for line in lines] == ["Worker property offset.flush.interval.ms",
                                                      "Worker property offset.storage.file.filename",
                                                      "Worker property plugin.path"]


def test_offset_flush_timeout_bounds_the_group_mirror(tmp_path):
    props = sink_props("flush-timeout", "t", "db.t", tmp_path)
    config = SinkConfig.parse(props, {"bootstrap.servers": "127.0.0.1:1", "offset.flush.timeout.ms": "2500"})
    coordinator = Coordinator(config, load_catalog(config.props), {"bootstrap.servers": "127.0.0.1:1"},
                              max_tasks=1, split_large=False)

    assert coordinator.group_mirror.timeout == 2.5
    assert offset_flush_timeout_s({}) == 5.0  # Connect's default


@pytest.mark.parametrize("value, message", [("soon", "Not a number of type LONG"), ("0", "at least 1")])
def test_a_bad_offset_flush_timeout_is_refused_at_parse_naming_the_key(tmp_path, value, message):
    with pytest.raises(ConfigException, match=f"offset.flush.timeout.ms.*{message}"):
        SinkConfig.parse(sink_props("bad", "t", "db.t", tmp_path), {"offset.flush.timeout.ms": value})
