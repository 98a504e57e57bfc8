"""On a worker running several connectors, every line a connector's job logs names it."""

from __future__ import annotations

import io
import logging
import threading

from connector.cli import log_handler
from connector.config.sink_config import SinkConfig
from connector.job import SinkJob
from tests.integration.harness import sink_props


def test_each_connector_thread_names_its_connector_in_every_line(tmp_path):
    stream = io.StringIO()
    handler = log_handler(None)
    handler.setStream(stream)  # type: ignore[attr-defined]
    logger = logging.getLogger("connector.job")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    def connector_thread(name: str) -> None:
        config = SinkConfig.parse(sink_props(name, "t", f"db.{name}", tmp_path / name),
                                  {"bootstrap.servers": "127.0.0.1:1"})
        job = SinkJob(config, runner=lambda assignments: [])
        job._run = lambda: logger.info("Cycle 1: 10 records")  # type: ignore[method-assign] # what run logs
        job.run()
        logger.info("Connector %s stopped", name)  # after run: the worker's line, naming it itself

    try:
        threads = [threading.Thread(target=connector_thread, args=(name,)) for name in ("orders", "clicks")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        logger.info("The worker is up")  # not a connector's line
    finally:
        logger.removeHandler(handler)

    lines = stream.getvalue().splitlines()
    assert sorted(line.split("connector.job: ")[1] for line in lines) == [
        "Connector clicks stopped", "Connector orders stopped", "The worker is up",
        "[clicks] Cycle 1: 10 records", "[orders] Cycle 1: 10 records"]
