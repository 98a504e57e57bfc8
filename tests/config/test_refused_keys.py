"""Keys icefloe cannot honour fail validation, naming the key, instead of changing what is written.

(The upsert and CDC keys, once refused here, are accepted now: tests/config/test_upsert_keys.py.)"""

from __future__ import annotations

import pytest

from connector.api.errors import ConfigException
from connector.config.sink_config import SinkConfig
from tests.integration.harness import sink_props


def test_upsert_mode_off_and_the_tabular_control_keys_are_accepted(tmp_path):
    config = SinkConfig.parse(sink_props("c", "t", "db.t", tmp_path, **{
        "iceberg.tables.upsert-mode-enabled": "false", "iceberg.control.group-id": "cg",
        "iceberg.control.topic": "ctl", "icefloe.takeover": "none"}))
    assert config.unused_keys == ()
    assert (config.iceberg.control_group_id, config.iceberg.control_topic, config.icefloe.takeover) == (
        "cg", "ctl", "none")
    with pytest.raises(ConfigException, match="icefloe.takeover"):
        SinkConfig.parse(sink_props("c", "t", "db.t", tmp_path, **{"icefloe.takeover": "sometimes"}))
