"""Trying icefloe on your own data: ``icefloe broker`` on a port of your choice, produce to it,
``icefloe run``, then ``icefloe show`` (docs/operations.md, Trying icefloe on your own data)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from confluent_kafka import Producer

from connector import cli
from connector.embedded.tansu import free_port
from tests.integration.harness import sink_props, unique, write_config_file

pytestmark = pytest.mark.integration


def start_broker(port: int, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, "-m", "connector.cli", "broker", "--port", str(port), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_for_line(process: subprocess.Popen[str], text: str, timeout: float = 30) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            pytest.fail(f"icefloe broker ended: {lines} {process.stderr.read()}")  # type: ignore[union-attr]
        lines.append(line)
        if text in line:
            return lines
    pytest.fail(f"no '{text}' from icefloe broker in {timeout}s: {lines}")


def test_broker_run_and_show_end_to_end(tmp_path, capsys):
    port = free_port()
    broker = start_broker(port, "--topic", "mine:2")
    try:
        lines = wait_for_line(broker, "Ctrl-C")
        assert "Created topic mine (2 partitions)" in lines[0]
        assert f"127.0.0.1:{port}" in lines[-1]
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
        for i in range(300):
            producer.produce("mine", json.dumps({"id": i, "what": f"thing {i}"}).encode(), partition=i % 2)
        producer.flush(30)
        props = sink_props(unique("tryit"), "mine", "db.mine", tmp_path / "work")
        del props["icefloe.driver.max-records"]  # a small topic: the driver reads it, no Spark needed
        config = write_config_file(tmp_path / "c.json", props)

        assert cli.main(["run", str(config), "--bootstrap-servers", f"127.0.0.1:{port}", "--until-caught-up",
                         "--quiet"]) == 0
        capsys.readouterr()

        assert cli.main(["show", str(config), "--rows", "2"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("Table db.mine: 300 rows, 1 snapshot(s)"), out
        assert "1: id: optional long" in out and "2: what: optional string" in out
        offsets = [line for line in out.splitlines() if "next offsets kafka.connect.offsets.mine." in line]
        assert len(offsets) == 1 and json.loads(offsets[0].split(" = ")[1]) == {"0": 150, "1": 150}, out
        samples = out.split("Sample rows (2):\n")[1].strip().splitlines()
        assert all(json.loads(row)["what"] == f"thing {json.loads(row)['id']}" for row in samples)
        assert len(samples) == 2
    finally:
        broker.send_signal(signal.SIGINT)
        assert broker.wait(timeout=15) == 0
    with pytest.raises(OSError):  # Ctrl-C stopped the broker itself, not only the command
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_broker_on_a_taken_port_says_so_in_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        broker = start_broker(port)
        out, err = broker.communicate(timeout=30)
    assert broker.returncode == 1
    assert err.strip() == f"Cannot start the broker on 127.0.0.1:{port}: Address already in use; pass another --port"


def test_show_names_a_missing_table_and_exits_1(tmp_path, capsys):
    config = write_config_file(tmp_path / "c.json", sink_props("showmissing", "t", "db.nothing", tmp_path / "w"))

    assert cli.main(["show", str(config)]) == 1

    err = capsys.readouterr().err.strip()
    assert err.startswith("Table db.nothing: cannot be read: NoSuchTableError"), err
    assert len(err.splitlines()) == 1
