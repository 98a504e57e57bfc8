"""A service that cannot be reached when `icefloe run` starts: a few clear lines, soon, naming it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.harness import sink_props, unique, write_config_file
from tests.support.unreachable import closed_port, refusing_rest_catalog

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


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


def rest_catalog(props: dict[str, str], uri: str, **extra: str) -> dict[str, str]:
    return {**props, "iceberg.catalog.type": "rest", "iceberg.catalog.uri": uri, "iceberg.catalog.warehouse": "wh",
            **extra}


def test_an_unreachable_catalog_is_retried_in_one_line_then_fails_naming_it(tmp_path):
    uri = f"http://127.0.0.1:{closed_port()}"
    props = rest_catalog(sink_props(unique("nocat"), "t", "db.t", tmp_path), uri,
                         **{"iceberg.catalog.credential": "a:b", "icefloe.transient.retry-timeout-ms": "2000"})
    config = write_config_file(tmp_path / "c.json", props)

    code, seconds, lines = run(config, f"127.0.0.1:{closed_port()}")

    assert code == 1 and seconds < 60, (code, seconds)
    assert len(lines) <= 3, lines  # the fault met, then the job's end: no traceback, no line per attempt
    assert f"The catalog 'iceberg' (rest at {uri}) is unreachable: /v1/oauth/tokens:" in lines[0]
    assert "Connection refused" in lines[0] and "retrying with backoff for up to 2s" in lines[0]
    assert re.match(r"Job failed: Opening the catalog failed for \d+s on a transient error, beyond "
                    r"icefloe.transient.retry-timeout-ms=2000: The catalog 'iceberg' \(rest at ", lines[-1])


def test_a_refusing_catalog_fails_at_once_in_one_line_and_debug_shows_the_traceback(tmp_path):
    props = sink_props(unique("refused"), "t", "db.t", tmp_path)
    with refusing_rest_catalog(401, "NotAuthorizedException", "Credentials are invalid") as uri:
        config = write_config_file(tmp_path / "c.json", rest_catalog(props, uri, **{"iceberg.catalog.token": "t"}))
        code, seconds, lines = run(config, f"127.0.0.1:{closed_port()}")
        debug = run(config, f"127.0.0.1:{closed_port()}", "--debug")[2]

    assert code == 1 and seconds < 60
    assert lines == [f"Job failed: The catalog 'iceberg' (rest at {uri}) refused the credentials "
                     "(NotAuthorizedException: Credentials are invalid); check iceberg.catalog.credential or "
                     "iceberg.catalog.token"]
    assert any(line.startswith("Traceback") for line in debug) and debug[-1] == lines[-1]
