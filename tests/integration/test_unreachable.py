"""A service that cannot be reached when `icefloe run` starts: a few clear lines, soon, naming it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.harness import sink_props, unique, write_config_file

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run(config: Path, bootstrap: str, *extra: str) -> tuple[int, float, list[str]]:
    """Exit code, seconds, output lines of ``icefloe run --until-caught-up`` (stdout and stderr)."""
    began = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    finished = subprocess.run([sys.executable, "-m", "connector.cli", "run", str(config), "--bootstrap-servers",
                               bootstrap, "--until-caught-up", *extra], capture_output=True, text=True, timeout=120,
                              env=env, cwd=config.parent)
    return finished.returncode, time.monotonic() - began, (finished.stdout + finished.stderr).splitlines()


def test_an_unreachable_broker_fails_the_job_in_seconds_naming_the_address(tmp_path):
    port = closed_port()
    props = sink_props(unique("nobroker"), "t", "db.t", tmp_path, **{"icefloe.kafka.connect-timeout-ms": "3000"})
    config = write_config_file(tmp_path / "c.json", props)

    code, seconds, lines = run(config, f"127.0.0.1:{port}")

    assert code == 1
    assert seconds < 60, f"took {seconds:.0f}s"  # 3 s of trying, plus the interpreter's start
    assert len(lines) <= 5, lines  # not librdkafka's ~16 reconnect lines a second
    assert lines[-1].startswith(f"Job failed: Cannot reach the Kafka cluster at bootstrap.servers=127.0.0.1:{port} "
                                "within 3s")
    assert f"Connect to ipv4#127.0.0.1:{port} failed: Connection refused" in lines[-1]
    assert not any(line.startswith("%3|") for line in lines)
