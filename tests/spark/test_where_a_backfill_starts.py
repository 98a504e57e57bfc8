"""Where a large cycle runs while Spark starts: in the driver on a local master, on the executors on a
cluster master (icefloe.driver.while-spark-starts unset), as the key says when set."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from connector.config.icefloe_config import parse_icefloe_config
from connector.spark import session
from connector.spark.runner import SparkTaskRunner


@pytest.mark.parametrize("master, key, bridges", [
    ("local[*]", None, True), ("local[2]", None, True),
    ("spark://master:7077", None, False), ("yarn", None, False), ("k8s://https://api:6443", None, False),
    ("spark://master:7077", "true", True), ("local[*]", "false", False),
])
def test_a_large_cycle_reads_in_the_driver_while_spark_starts_only_where_it_should(master, key, bridges):
    starting: Future = Future()  # a session still starting
    runner = SparkTaskRunner(starting, master=master)
    props = {} if key is None else {"icefloe.driver.while-spark-starts": key}

    runner.expect_cycle(1_000_000, parse_icefloe_config(props))

    assert runner.bridging is bridges


def test_the_master_is_the_one_the_session_is_built_for(monkeypatch):
    monkeypatch.delenv("MASTER", raising=False)
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    monkeypatch.setattr(session, "_building_for", None)
    assert session.configured_master() == "local[*]"
    monkeypatch.setenv("MASTER", "yarn")
    assert session.configured_master() == "yarn"
    session._settings({"spark.master": "spark://m:7077"}, quick_start=False)  # icefloe serve --spark-conf
    assert session.configured_master() == "spark://m:7077"
    assert session.configured_master({"spark.master": "local[1]"}) == "local[1]"
