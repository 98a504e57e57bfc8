"""iceberg.tables.upsert-mode-enabled and iceberg.tables.cdc-field: accepted on both connector classes."""

from __future__ import annotations

import pytest

from connector.api.errors import ConfigException
from connector.config.sink_config import SinkConfig
from tests.integration.harness import sink_props

CLASSES = ["org.apache.iceberg.connect.IcebergSinkConnector", "io.tabular.iceberg.connect.IcebergSinkConnector"]


@pytest.mark.parametrize("connector_class", CLASSES)
@pytest.mark.parametrize("extra, upsert, cdc_field", [
    ({}, False, None),
    ({"iceberg.tables.upsert-mode-enabled": "false"}, False, None),
    ({"iceberg.tables.upsert-mode-enabled": "true"}, True, None),
    ({"iceberg.tables.cdc-field": "_cdc.op"}, False, "_cdc.op"),
    ({"iceberg.tables.cdc-field": " op ", "iceberg.tables.upsert-mode-enabled": "true"}, True, "op"),
    ({"iceberg.tables.cdc-field": "  "}, False, None),  # blank is unset, as a blank route field
])
def test_the_keys_are_accepted_and_either_one_makes_every_table_an_upsert_table(tmp_path, connector_class, extra,
                                                                                upsert, cdc_field):
    config = SinkConfig.parse(sink_props("c", "t", "db.t", tmp_path, **{"connector.class": connector_class,
                                                                         **extra}))
    assert config.unused_keys == ()
    assert (config.iceberg.upsert_mode, config.iceberg.cdc_field) == (upsert, cdc_field)
    assert config.iceberg.upsert_table("db.t") == (upsert or cdc_field is not None)


@pytest.mark.parametrize("key, value, message", [
    ("iceberg.tables.cdc-field", "_cdc..op", "Invalid value _cdc..op for configuration iceberg.tables.cdc-field: "
                                             "a field path such as `_cdc.op`"),
    ("iceberg.tables.cdc-field", ".op", "iceberg.tables.cdc-field"),
    ("iceberg.tables.upsert-mode-enabled", "yes", "iceberg.tables.upsert-mode-enabled"),
])
def test_bad_values_are_refused_naming_the_key(tmp_path, key, value, message):
    with pytest.raises(ConfigException, match=message):
        SinkConfig.parse(sink_props("c", "t", "db.t", tmp_path, **{key: value}))


def test_id_columns_per_table_win_over_the_default(tmp_path):
    config = SinkConfig.parse(sink_props("c", "t", "db.t,db.u", tmp_path, **{
        "iceberg.tables.default-id-columns": "id", "iceberg.table.db.u.id-columns": "region, acct.no"}))
    assert config.iceberg.table_config("db.t").id_columns == ("id",)
    assert config.iceberg.table_config("db.u").id_columns == ("region", "acct.no")
