"""The session-scoped ``s3_endpoint`` fixture: a real S3 HTTP endpoint served by ``moto_server``.

``moto_server`` (PyPI ``moto[server]``) runs as its own process on a free
loopback port, so the connector talks to it exactly as to AWS S3 or MinIO:
over HTTP, with path-style requests and static credentials. The fixture
creates no buckets; each test makes its own. The server is stopped at the
end of the session (and killed with the test process if that dies first).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from connector.embedded.process import LOOPBACK, ServerProcess, ServerStartError


class S3EndpointStartError(ServerStartError):
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


class MotoServer(ServerProcess):
    """``python -m moto.server`` on ``127.0.0.1:<free port>``; :meth:`start` waits until it answers."""

    log_prefix = "moto-server-"
    stop_timeout = 10.0

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    def command(self, port: int) -> list[str]:
        return [sys.executable, "-m", "moto.server", "-H", LOOPBACK, "-p", str(port)]

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
