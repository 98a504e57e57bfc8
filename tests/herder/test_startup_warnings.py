"""A connector started on the REST worker warns about its Java sink keys that have no effect, as `icefloe run` does."""

from __future__ import annotations

import logging

from connector.herder.connector_runtime import ConnectorRuntime
from connector.job import StopSignal

CONFIG = {"name": "orders", "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
          "topics": "orders", "iceberg.tables": "db.orders", "iceberg.catalog.type": "rest",
          "iceberg.catalog.uri": "http://127.0.0.1:1", "iceberg.control.commit.threads": "4"}


class NeverReady:
    """A task runner whose Spark session never comes up: the job thread stops before any cycle."""

    def session_ready(self, timeout: float) -> bool:
        return False


def test_the_job_thread_logs_each_key_with_no_effect_before_it_waits_for_spark(caplog):
    runtime = ConnectorRuntime("orders", dict(CONFIG), "RUNNING", worker={"bootstrap.servers": "127.0.0.1:1"},
                               runner=NeverReady(), worker_id="127.0.0.1:8083", resolve=lambda config: config)
    stop = StopSignal()
    stop.event.set()

    with caplog.at_level(logging.WARNING, logger="connector.herder.connector_runtime"):
        runtime._run(stop)

    assert "Connector orders: iceberg.control.commit.threads=4 has no effect in icefloe: the Java coordinator " \
           "commits tables on this many threads" in caplog.text
