"""Table names are checked where the config is (iceberg.tables, per-table keys) and on dynamic route values."""

from __future__ import annotations

import pytest

from connector.api.errors import ConfigException
from connector.config.sink_config import SinkConfig
from connector.config.table_names import table_name_problem

BASE = {
    "name": "orders-sink",
    "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
    "topics": "orders",
    "iceberg.catalog.type": "sql",
    "iceberg.catalog.uri": "sqlite:///:memory:",
}


@pytest.mark.parametrize("name, reason", [
    ("events", "has no namespace: write `<namespace>.<table>`, e.g. `default.events`"),
    ("default..x", "empty part"),
    ("default.x.", "empty part"),
    (".x", "empty part"),
    ("default.my events!", "`my events!` holds a space, `!`"),
    ("default.ev/ents", "`ev/ents` holds `/`"),
    ("default.ev\\ents", "holds `\\`"),
    ("default. x", "` x` holds a space"),
])
def test_iceberg_tables_refuses_what_names_no_table_naming_the_key_value_and_reason(name, reason):
    with pytest.raises(ConfigException) as raised:
        SinkConfig.parse({**BASE, "iceberg.tables": f"db.ok,{name}"})
    message = str(raised.value)
    assert "iceberg.tables" in message and reason in message
    assert "\n" not in message


@pytest.mark.parametrize("name", ["default.events", "a.b.events", "db.order_lines", "db.order-lines", "db.Événements"])
def test_good_names_pass(name):
    assert SinkConfig.parse({**BASE, "iceberg.tables": name}).iceberg.tables == (name,)


def test_a_per_table_key_names_its_table_check():
    with pytest.raises(ConfigException, match=r"iceberg\.table\.default\.ev/ents\.route-regex.*`ev/ents` holds `/`"):
        SinkConfig.parse({**BASE, "iceberg.tables": "default.ok", "iceberg.tables.route-field": "kind",
                          "iceberg.table.default.ev/ents.route-regex": "x"})


def test_hive_and_glue_refuse_what_their_metastores_refuse():
    assert "letters, digits and `_` only" in table_name_problem("db.order-lines", {"type": "hive"})
    assert "AWS Glue" in table_name_problem("db.order-lines",
                                            {"catalog-impl": "org.apache.iceberg.aws.glue.GlueCatalog"})
    assert table_name_problem("db.order-lines", {"type": "rest"}) is None
    assert table_name_problem("db.order_lines", {"type": "glue"}) is None
