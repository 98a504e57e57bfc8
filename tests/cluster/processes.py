"""`icefloe serve` worker processes of one distributed group, as an operator starts them on several hosts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests

from connector.embedded.tansu import free_port

DEADLINE = 120.0


class GroupWorker:
    """One worker process with its own Spark session (local[1]), REST on a fixed loopback port."""

    def __init__(self, properties: dict[str, str], work: Path, index: int):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.worker_id = f"127.0.0.1:{self.port}"
        work.mkdir(parents=True, exist_ok=True)
        self.properties = work / f"worker-{index}.properties"
        lines = {**properties, "listeners": self.url}
        self.properties.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
        self.log = work / f"worker-{index}.log"
        self.process: subprocess.Popen | None = None

    def launch(self) -> "GroupWorker":
        command = [sys.executable, "-m", "connector.cli", "serve", "--worker", str(self.properties),
                   "--spark-conf", "spark.master=local[1]", "--spark-conf", "spark.ui.enabled=false"]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            env={**os.environ, "PYTHONUNBUFFERED": "1",
                                                 "SPARK_LOCAL_IP": "127.0.0.1"})
        return self

    def wait_healthy(self) -> "GroupWorker":
        wait_until(self.healthy, f"worker {self.worker_id} to be healthy", self)
        return self

    def healthy(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"worker exited with {self.process.returncode}:\n{self.tail()}")
        try:
            return requests.get(f"{self.url}/health", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        assert self.process is not None
        self.process.wait(timeout=30)

    def terminate(self) -> int:
        self.signal(signal.SIGTERM)
        assert self.process is not None
        return self.process.wait(timeout=120)

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return requests.request(method, f"{self.url}{path}", timeout=60, **kwargs)

    def get(self, path: str) -> Any:
        response = self.request("GET", path)
        assert response.status_code == 200, f"{path}: {response.status_code} {response.text}"
        return response.json()

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def runs(self, name: str) -> int:
        """How many times this worker's log says it started running ``name``."""
        return self.log.read_text(errors="replace").count(f"Connector {name} now runs on worker {self.worker_id} ")


def wait_until(condition, what: str, *workers: GroupWorker, timeout: float = DEADLINE):
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = condition()
        except (requests.RequestException, AssertionError, KeyError, ValueError) as exc:
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.3)
    logs = "\n".join(f"--- {w.worker_id}:\n{w.tail()}" for w in workers)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}\n{logs}")
