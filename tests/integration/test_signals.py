"""Stopping `icefloe run` the way service managers and terminals do: a signal to the whole process group.

systemd's default `KillMode=control-group`, `kill -TERM -PGID` and Ctrl-C in a
terminal all signal every process of the group. The job must still finish its
commit in flight and exit 0: the Spark driver JVM lives in a session of its
own, so the signal reaches Python only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from pyiceberg.exceptions import NoSuchTableError

from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_process_group_finishes_the_commit_and_exits_0(kafka_broker, tmp_path, signum):
    topic = unique("pgrp")
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(500)], 2)
    props = sink_props(unique("pgrp"), topic, "db.pgrp", tmp_path, **{"iceberg.control.commit.interval-ms": "500"})
    config = write_config_file(tmp_path / "c.json", props)
    job = subprocess.Popen([sys.executable, "-m", "connector.cli", "run", str(config),
                            "--bootstrap-servers", kafka_broker.bootstrap, "--quiet"],
                           start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_rows(props, 500, job)
        os.killpg(job.pid, signum)
        out, err = job.communicate(timeout=90)
    finally:
        if job.poll() is None:
            job.kill()

    assert job.returncode == 0, err[-3000:]
    assert "finishing the commit in flight" in err
    assert json.loads(out.strip().splitlines()[-1])["connector"] == props["name"]
    assert sorted(row["id"] for row in table_rows(props, "db.pgrp")) == list(range(500))


def _wait_for_rows(props: dict[str, str], expected: int, job: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert job.poll() is None, job.communicate()[1][-3000:]
        try:
            if len(table_rows(props, "db.pgrp")) >= expected:
                return
        except NoSuchTableError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{expected} rows did not arrive")
