"""The progress bar on a terminal: it moves while a cycle's tasks read (not only at the commit), and a
job keeps one bar per topic however many cycles and catch-ups it runs."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest
from rich.console import Console

from connector.progress import Progress, TopicBars, terminal_bar
from connector.progress_feed import ProgressFeed, TaskProgress
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_a_job_keeps_one_bar_per_topic_across_catch_ups_and_counts_on():
    bar = terminal_bar(Console(file=open(os.devnull, "w"), force_terminal=True))
    bars = TopicBars(bar)
    first = Progress({("t", 0): 0, ("u", 0): 5}, {("t", 0): 100, ("u", 0): 5}, bars=bars)
    first.topics["t"].done = 100
    first.finish()
    Progress({("t", 0): 100, ("u", 0): 5}, {("t", 0): 130, ("u", 0): 5}, bars=bars).finish()

    assert [task.description for task in bar.tasks] == ["t", "u"]
    t, u = bar.tasks
    assert t.total == 130 and t.completed == 100
    assert u.total == 0  # nothing to read: no stray 0/1


def test_tasks_move_the_bar_before_the_commit():
    bar = terminal_bar(Console(file=open(os.devnull, "w"), force_terminal=True))
    progress = Progress({("t", 0): 10, ("t", 1): 0}, {("t", 0): 110, ("t", 1): 100}, bars=TopicBars(bar))
    feed = ProgressFeed(progress.live, host="127.0.0.1")
    task = TaskProgress("job-1-1-0", feed.address("127.0.0.1"))
    task.sent({("t", 0): 60, ("t", 1): 500}, {"t": 2_000_000}, force=True)  # t[1] past its target: capped

    deadline = time.monotonic() + 5
    while bar.tasks[0].completed == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert bar.tasks[0].completed == 50 + 100 and bar.tasks[0].fields["mb"] == "2.0"


@pytest.mark.integration
def test_the_bar_moves_through_a_cycle_on_a_pseudo_terminal(kafka_broker, tmp_path):
    records = 200_000
    topic = unique("bar")
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic,
                        [json.dumps({"id": i, "note": "x" * 40}).encode() for i in range(records)], 2)
    # one cycle, read in the driver (no Spark start to wait for): only the tasks' reports can move the bar
    props = sink_props(unique("bar"), topic, "db.bar", tmp_path / "w", **{"icefloe.driver.max-records": records})
    config = write_config_file(tmp_path / "c.json", props)

    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "160", "LINES": "40", "TERM": "xterm"}
    process = subprocess.Popen([sys.executable, "-m", "connector.cli", "run", str(config), "--bootstrap-servers",
                                kafka_broker.bootstrap, "--until-caught-up"], stdin=follower, stdout=follower,
                               stderr=follower, env=env)
    os.close(follower)
    output = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process exited
            break
        if not chunk:
            break
        output += chunk
    assert process.wait(timeout=60) == 0
    text = ANSI.sub("", output.decode(errors="replace"))

    counts = {int(done.replace(",", "")) for done in re.findall(rf"([\d,]+)/{records}\b", text)}
    before_commit = text.split("Cycle 1:")[0]
    moving = {int(d) for d in re.findall(rf"(\d+)/{records}\b", before_commit)} - {0, records}
    assert moving, f"the bar did not move before the commit: {sorted(counts)}"
    assert records in counts
    assert sorted(r["id"] for r in table_rows(props, "db.bar")) == list(range(records))
