"""Keys icefloe cannot honour yet fail validation, naming the key, instead of changing what is written."""

from __future__ import annotations

import pytest

from connector.api.errors import ConfigException
from connector.config.sink_config import SinkConfig
from tests.integration.harness import sink_props


@pytest.mark.parametrize("key, value", [("iceberg.tables.cdc-field", "_op"),
                                        ("iceberg.tables.upsert-mode-enabled", "true")])
def test_cdc_and_upsert_keys_fail_validation(tmp_path, key, value):
    with pytest.raises(ConfigException, match=rf"configuration {key}: .* not supported by icefloe yet"):
        SinkConfig.parse(sink_props("c", "t", "db.t", tmp_path, **{key: value}))


def test_upsert_mode_off_and_the_tabular_control_keys_are_accepted(tmp_path):
    config = SinkConfig.parse(sink_props("c", "t", "db.t", tmp_path, **{
        "iceberg.tables.upsert-mode-enabled": "false", "iceberg.control.group-id": "cg",
        "iceberg.control.topic": "ctl", "icefloe.takeover": "none"}))
    assert config.unused_keys == ()
    assert (config.iceberg.control_group_id, config.iceberg.control_topic, config.icefloe.takeover) == (
        "cg", "ctl", "none")
    with pytest.raises(ConfigException, match="icefloe.takeover"):
        SinkConfig.parse(sink_props("c", "t", "db.t", tmp_path, **{"icefloe.takeover": "sometimes"}))
