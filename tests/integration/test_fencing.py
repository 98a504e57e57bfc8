"""Two jobs of one connector config run at once: the fence lets one commit each range, never both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

RECORDS = 40_000
FENCED = "refused: another writer moved its offsets"


def test_two_jobs_of_one_connector_started_at_once_commit_every_record_once(kafka_broker, tmp_path):
    topic, table = unique("fence"), "db.fence"
    props = sink_props(unique("fence"), topic, table, tmp_path, **{"icefloe.commit.max-records": "8000"})
    config_file = write_config_file(tmp_path / "fence.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic,
                        [json.dumps({"id": i, "pad": "x" * 40}).encode() for i in range(RECORDS)], 2)
    command = [sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers",
               kafka_broker.bootstrap, "--until-caught-up", "--spark-conf", "spark.master=local[1]",
               "--spark-conf", "spark.ui.enabled=false"]
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    jobs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
            for _ in range(2)]
    outputs = [job.communicate(timeout=600)[0] for job in jobs]
    codes = [job.returncode for job in jobs]

    counts = Counter(row["id"] for row in table_rows(props, table))
    assert not {i: n for i, n in counts.items() if n > 1}, "records committed twice"
    assert set(counts) == set(range(RECORDS)), "records missing"
    # Whichever job commits a range first wins; the other is refused at that commit and exits 1
    # with the error naming both positions. Both exit 0 only when they never overlapped.
    assert 0 in codes, outputs
    for code, output in zip(codes, outputs):
        if code != 0:
            assert code == 1 and FENCED in output, output[-3000:]
            # "expected next offset N" when the table held offsets at the cycle's start, "expected no
            # offset" when the other job had created it but not committed yet; when the table was created
            # during the cycle, "its tasks saw ..." (what the refused job's tasks skipped below), or
            # "expected at most N" for a partition none of its tasks loaded the table for
            assert f"topic {topic} partition" in output, output[-3000:]
            phrasings = ("expected next offset", "expected no offset", "its tasks saw", "expected at most")
            assert any(f in output for f in phrasings), output[-3000:]
