"""The few Kafka Connect REST calls a deploy makes, over ``requests``.

Only the public API is used (``GET/PUT /connectors/{name}/config``, ``DELETE``,
``GET /connectors``, ``.../status``, ``/connector-plugins/{class}/config``), so the
same deploy works against icefloe's worker and against a Kafka Connect worker.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import requests

REBALANCE_RETRY_SECONDS = 60.0  # a worker group without a leader for longer than this is reported


class WorkerError(Exception):
    """The worker refused a request: ``status`` and Connect's ``message``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class WorkerUnreachable(Exception):
    """No answer at all from the worker's URL (connection refused, DNS, TLS, timeout)."""


class ConnectClient:
    def __init__(self, url: str, auth: tuple[str, str] | None = None, request_timeout: float = 30.0):
        self.url = url.rstrip("/")
        self.session = requests.Session()
        self.session.auth = auth
        self.session.headers.update({"Accept": "application/json"})
        self.request_timeout = request_timeout

    def connector_names(self) -> list[str]:
        return list(self._call("GET", "/connectors"))

    def connector_config(self, name: str) -> dict[str, str] | None:
        """The config as stored on the worker, or None when there is no such connector."""
        return self._found(f"/connectors/{_seg(name)}/config")

    def put_config(self, name: str, config: dict[str, str]) -> bool:
        """Create or replace the config; True when the worker created the connector (201)."""
        response = self._send("PUT", f"/connectors/{_seg(name)}/config", json=config)
        return response.status_code == 201

    def stop(self, name: str) -> None:
        """``PUT /connectors/NAME/stop`` (Connect 3.5+): the connector and its tasks are shut down."""
        self._send("PUT", f"/connectors/{_seg(name)}/stop")

    def delete(self, name: str) -> None:
        self._send("DELETE", f"/connectors/{_seg(name)}")

    def status(self, name: str) -> dict[str, Any] | None:
        """The ConnectorStateInfo, or None while the worker has no status for it yet."""
        return self._found(f"/connectors/{_seg(name)}/status")

    def password_keys(self, connector_class: str) -> frozenset[str]:
        """Keys the plugin declares as PASSWORD; empty when the worker cannot say."""
        try:
            keys = self._call("GET", f"/connector-plugins/{_seg(connector_class)}/config")
        except WorkerError:
            return frozenset()
        return frozenset(k.get("name", "") for k in keys if isinstance(k, dict) and k.get("type") == "PASSWORD")

    def _found(self, path: str) -> dict[str, Any] | None:
        """``GET path``'s JSON object, or None when the worker answers 404."""
        try:
            return dict(self._call("GET", path))
        except WorkerError as exc:
            if exc.status == 404:
                return None
            raise

    def _call(self, method: str, path: str) -> Any:
        response = self._send(method, path)
        try:
            return response.json()
        except ValueError:
            raise WorkerError(response.status_code, f"{method} {path} answered with no JSON body") from None

    def _send(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One request; a 409 that says a rebalance is under way is retried, as Connect's own clients do."""
        deadline = time.monotonic() + REBALANCE_RETRY_SECONDS
        while True:
            try:
                response = self.session.request(method, self.url + path, timeout=self.request_timeout, **kwargs)
            except requests.RequestException as exc:
                raise WorkerUnreachable(f"Cannot reach the Connect worker at {self.url}: {_reason(exc)}") from None
            if response.status_code < 400:
                return response
            message = _message(response)
            if response.status_code != 409 or "rebalance" not in message or time.monotonic() > deadline:
                raise WorkerError(response.status_code, message)
            time.sleep(1.0)


def _seg(value: str) -> str:
    """A connector or plugin name as one URL path segment."""
    return quote(value, safe="")


def _message(response: requests.Response) -> str:
    """Connect's ``message`` from an error body, or the raw text when it is not Connect's shape."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    text = response.text.strip()
    return text or f"HTTP {response.status_code} {response.reason}"


def _reason(exc: requests.RequestException) -> str:
    """The innermost cause, which says what went wrong (refused, unknown host) without the stack of wrappers."""
    cause: BaseException = exc
    while cause.__context__ is not None and not isinstance(cause, ConnectionRefusedError):
        cause = cause.__context__
    text = str(cause) or type(cause).__name__
    return text.splitlines()[0]
