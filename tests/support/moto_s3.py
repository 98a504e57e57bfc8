"""The session-scoped ``s3_endpoint`` fixture: a real S3 HTTP endpoint served by ``moto_server``.

``moto_server`` (PyPI ``moto[server]``) runs as its own process on a free
loopback port, so the connector talks to it exactly as to AWS S3 or MinIO:
over HTTP, with path-style requests and static credentials. The fixture
creates no buckets; each test makes its own. The server is stopped at the
end of the session (and killed with the test process if that dies first).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Optional

import pytest

from connector.embedded.tansu import free_port

_LOOPBACK = "127.0.0.1"


class S3EndpointStartError(RuntimeError):
    """moto_server did not answer in time; the message includes its log."""


@dataclass(frozen=True)
class S3Endpoint:
    """Where the S3 endpoint listens and the (arbitrary, but explicit) credentials to use."""

    url: str
    access_key_id: str = "icefloe-test-key"
    secret_access_key: str = "icefloe-test-secret"
    region: str = "us-east-1"

    def client(self):
        """A boto3 S3 client for this endpoint (path-style addressing)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            region_name=self.region,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}),
        )

    def object_keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key in ``bucket`` under ``prefix``."""
        paginator = self.client().get_paginator("list_objects_v2")
        return [item["Key"] for page in paginator.paginate(Bucket=bucket, Prefix=prefix)
                for item in page.get("Contents", [])]


def _die_with_parent() -> Optional[Callable[[], None]]:
    """A ``preexec_fn`` that has Linux kill the server if the test process is killed."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except OSError:
        return None

    def set_death_signal() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return set_death_signal


class MotoServer:
    """``python -m moto.server`` on ``127.0.0.1:<free port>``; :meth:`start` waits until it answers."""

    def __init__(self, startup_timeout: float = 30.0) -> None:
        self._startup_timeout = startup_timeout
        self._process: Optional[subprocess.Popen[bytes]] = None
        self.log_path: Optional[str] = None
        self.port: Optional[int] = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("MotoServer is not started")
        return f"http://{_LOOPBACK}:{self.port}"

    def log_text(self) -> str:
        if not self.log_path or not os.path.exists(self.log_path):
            return ""
        with open(self.log_path, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def start(self) -> "MotoServer":
        attempts = 3  # a port picked by the OS can be taken before the server binds it
        for attempt in range(1, attempts + 1):
            self._launch(free_port())
            try:
                self._wait_ready()
                return self
            except S3EndpointStartError:
                died = self._process is not None and self._process.poll() is not None
                self.stop()
                if not died or attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    def _launch(self, port: int) -> None:
        fd, self.log_path = tempfile.mkstemp(prefix="moto-server-", suffix=".log")
        self.port = port
        with os.fdopen(fd, "wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", _LOOPBACK, "-p", str(port)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent(),
            )

    def _wait_ready(self) -> None:
        import requests

        http = requests.Session()
        http.trust_env = False  # loopback: never through a proxy from the environment
        deadline = time.monotonic() + self._startup_timeout
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                raise S3EndpointStartError(f"moto_server exited on port {self.port}:\n{self.log_text()}")
            try:
                # ListBuckets: answered by the S3 backend itself, not just the HTTP layer.
                if http.get(self.url + "/", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise S3EndpointStartError(
            f"moto_server did not answer on {self.url} within {self._startup_timeout:.0f}s:\n{self.log_text()}")

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): the store is unreachable, its objects kept."""
        assert self._process is not None, "the server is not running"
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self._process is not None, "the server is not running"
        self._process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def remove_log(self) -> None:
        if self.log_path and os.path.exists(self.log_path):
            os.remove(self.log_path)


@pytest.fixture(scope="session")
def s3_endpoint(request: pytest.FixtureRequest) -> Iterator[S3Endpoint]:
    """One moto S3 server for the session; its log is kept only if some test failed."""
    server = MotoServer()
    try:
        server.start()
        yield S3Endpoint(url=server.url)
    finally:
        server.stop()
        if not request.session.testsfailed:
            server.remove_log()
