"""Where a connector resumes when its tables hold no icefloe offsets: Tabular's group, then Connect's."""

from __future__ import annotations

import json

import pytest

from connector.commit.resume_groups import resume_groups
from connector.config.sink_config import SinkConfig
from connector.kafka.group_offsets import commit_group_offsets
from tests.integration.harness import produce_round_robin, run_until_caught_up, sink_props, table_rows, unique
from tests.support.tansu import create_topic

TABULAR = "io.tabular.iceberg.connect.IcebergSinkConnector"


def test_the_groups_read_in_order(tmp_path):
    apache = SinkConfig.parse(sink_props("orders", "t", "db.t", tmp_path))
    assert resume_groups(apache) == ["connect-orders"]
    tabular = SinkConfig.parse(sink_props("orders", "t", "db.t", tmp_path, **{"connector.class": TABULAR}))
    assert resume_groups(tabular) == ["cg-control-orders", "connect-orders"]
    own = SinkConfig.parse(sink_props("orders", "t", "db.t", tmp_path, **{
        "connector.class": TABULAR, "iceberg.control.group-id": "my-cg"}))
    assert resume_groups(own) == ["my-cg", "connect-orders"]


@pytest.mark.integration
def test_a_tabular_connector_resumes_from_its_control_group_then_connects(kafka_broker, spark, tmp_path):
    topic, name = unique("tab"), unique("tab")
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(300)], 3)
    conf = {"bootstrap.servers": kafka_broker.bootstrap}
    # Tabular committed partitions 0 and 1 to its own group; connect-<name> lags on 0 and alone knows 2
    commit_group_offsets(conf, f"cg-control-{name}", {(topic, 0): 60, (topic, 1): 70})
    commit_group_offsets(conf, f"connect-{name}", {(topic, 0): 10, (topic, 2): 80})
    props = sink_props(name, topic, "db.tab", tmp_path, **{"connector.class": TABULAR})
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    ids = sorted(row["id"] for row in table_rows(props, "db.tab"))
    # value i sits at offset i // 3 of partition i % 3
    expected = sorted(i for i in range(300) if i // 3 >= {0: 60, 1: 70, 2: 80}[i % 3])
    assert ids == expected
