"""The session-scoped ``spark_cluster`` fixture: a Spark standalone master and one worker on loopback.

Both run with pyspark's bundled launcher (``$SPARK_HOME/bin/spark-class``,
``SPARK_HOME`` being pyspark's package folder), each on free loopback ports.
:meth:`SparkStandaloneCluster.start` returns once the master's web UI JSON
lists the worker as alive; both processes are killed at the end. If the
cluster cannot start, the fixture fails with both logs in the message.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Optional

import pytest

from connector.embedded.tansu import free_port

_LOOPBACK = "127.0.0.1"
# JVM options for the launcher and the daemons: C1 only and the serial collector start faster.
_QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


class ClusterStartError(RuntimeError):
    """The master or the worker did not come up; the message includes their logs."""


def spark_home() -> str:
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def _child_setup() -> Optional[Callable[[], None]]:
    """A ``preexec_fn``: own process group, and killed by Linux if the test process dies."""
    prctl = None
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
        except OSError:
            prctl = None

    def setup() -> None:
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return setup


class SparkStandaloneCluster:
    """``deploy.master.Master`` + one ``deploy.worker.Worker`` (``cores`` cores, ``memory``)."""

    def __init__(self, cores: int = 2, memory: str = "1g", startup_timeout: float = 60.0) -> None:
        self.cores = cores
        self.memory = memory
        self.startup_timeout = startup_timeout
        self.base = Path(tempfile.mkdtemp(prefix="icefloe-spark-cluster-"))
        self.master_port: Optional[int] = None
        self.master_webui_port: Optional[int] = None
        self.worker_webui_port: Optional[int] = None
        self._master: Optional[subprocess.Popen[bytes]] = None
        self._worker: Optional[subprocess.Popen[bytes]] = None

    @property
    def master_url(self) -> str:
        return f"spark://{_LOOPBACK}:{self.master_port}"

    @property
    def master_webui(self) -> str:
        return f"http://{_LOOPBACK}:{self.master_webui_port}"

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> "SparkStandaloneCluster":
        self.master_port, self.master_webui_port, self.worker_webui_port = free_port(), free_port(), free_port()
        self._master = self._launch("master", [
            "org.apache.spark.deploy.master.Master",
            "--host", _LOOPBACK, "--port", str(self.master_port), "--webui-port", str(self.master_webui_port),
        ])
        # The worker retries registering until the master is leader; starting it once the master's
        # RPC port accepts connections (rather than once its web UI answers) saves JVM start-up time.
        self._wait_for_port(self.master_port, "the master's RPC port", [self._master])
        work_dir = self.base / "worker-work"
        work_dir.mkdir()
        self._worker = self._launch("worker", [
            "org.apache.spark.deploy.worker.Worker", self.master_url,
            "--host", _LOOPBACK, "--cores", str(self.cores), "--memory", self.memory,
            "--webui-port", str(self.worker_webui_port), "--work-dir", str(work_dir),
        ])
        self._wait(lambda state: state.get("aliveworkers", 0) >= 1, "the worker to register",
                   [self._master, self._worker])
        return self

    def _launch(self, role: str, args: list[str]) -> subprocess.Popen[bytes]:
        home = spark_home()
        env = {
            **os.environ,
            "SPARK_HOME": home,
            "SPARK_LOCAL_IP": _LOOPBACK,
            "SPARK_NO_DAEMONIZE": "1",
            "SPARK_LOG_DIR": str(self.base),
            "SPARK_PID_DIR": str(self.base),
            # Small, quick-starting daemons: they only schedule; executors run in their own JVMs.
            "SPARK_DAEMON_MEMORY": "512m",
            "SPARK_DAEMON_JAVA_OPTS": _QUICK_JVM,
            "SPARK_LAUNCHER_OPTS": _QUICK_JVM,
            # No REST submission server: it would listen on the fixed port 6066.
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        }
        log = open(self.base / f"{role}.log", "wb")
        try:
            return subprocess.Popen([os.path.join(home, "bin", "spark-class"), *args], cwd=self.base, env=env,
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    preexec_fn=_child_setup())
        finally:
            log.close()

    def _wait(self, ready: Callable[[dict], bool], what: str, processes: list) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            self._check_alive(processes, what)
            state = self.state(timeout=1)
            if state is not None and ready(state):
                return
            time.sleep(0.25)
        raise ClusterStartError(f"timed out after {self.startup_timeout:.0f}s waiting for {what}\n{self.logs()}")

    def _wait_for_port(self, port: int, what: str, processes: list) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            self._check_alive(processes, what)
            try:
                with socket.create_connection((_LOOPBACK, port), timeout=1):
                    return
            except OSError:
                time.sleep(0.25)
        raise ClusterStartError(f"timed out after {self.startup_timeout:.0f}s waiting for {what}\n{self.logs()}")

    def _check_alive(self, processes: list, what: str) -> None:
        for process in processes:
            if process.poll() is not None:
                raise ClusterStartError(f"a Spark daemon exited (code {process.returncode}) while waiting for "
                                        f"{what}\n{self.logs()}")

    def stop(self) -> None:
        for attr in ("_worker", "_master"):
            process = getattr(self, attr)
            setattr(self, attr, None)
            if process is None:
                continue
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=10)
            else:  # the daemon is gone; anything it started in its group must go too
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def remove_files(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    # -- observing ---------------------------------------------------------------------------

    def state(self, timeout: float = 5) -> Optional[dict]:
        """The master's state from ``/json/`` (workers, active and completed applications), or None."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never a proxy
        try:
            with opener.open(self.master_webui + "/json/", timeout=timeout) as response:
                return json.loads(response.read())
        except (OSError, ValueError):
            return None

    def logs(self) -> str:
        """The master's and worker's logs, and every executor's stderr, for failure messages."""
        parts = []
        for path in [self.base / "master.log", self.base / "worker.log",
                     *sorted((self.base / "worker-work").glob("app-*/*/stderr"))]:
            if path.exists():
                text = path.read_text(errors="replace")
                parts.append(f"----- {path} -----\n{text[-20000:]}")
        return "\n".join(parts) or f"(no logs under {self.base})"


@pytest.fixture(scope="session")
def spark_cluster(request: pytest.FixtureRequest) -> Iterator[SparkStandaloneCluster]:
    """A standalone master with one 2-core worker; fails (never skips) with the logs if it can't start."""
    cluster = SparkStandaloneCluster()
    try:
        try:
            cluster.start()
        except ClusterStartError as exc:
            pytest.fail(f"Spark standalone cluster did not start: {exc}", pytrace=False)
        yield cluster
    finally:
        cluster.stop()
        if not request.session.testsfailed:
            cluster.remove_files()
