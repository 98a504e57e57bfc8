"""Whether the Kafka cluster answers at all, asked once when a job starts.

A job that never reached its cluster has nothing to ride out: ``bootstrap.servers``
points nowhere, a port or the security settings are wrong. Retrying that for
``icefloe.transient.retry-timeout-ms`` (5 minutes) under librdkafka's reconnect
attempts only hides the mistake, so a job first asks for the cluster's metadata
for at most ``icefloe.kafka.connect-timeout-ms`` and otherwise fails with one
line naming the bootstrap servers and what each connection attempt met. A
cluster lost later, after it answered, is a transient fault the job rides out
(connector/tolerance/transient.py).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping

from confluent_kafka import Consumer, KafkaError, KafkaException

from connector.api.errors import ConnectException
from connector.kafka.client_config import reader_config

#: One metadata request's wait: short, so the connection errors are collected as they come.
_ATTEMPT_SECONDS = 1.0
_TIMINGS = re.compile(r"\s*\(after \d+ms.*\)\s*$")  # the timings and counts that vary between attempts


class KafkaUnreachable(ConnectException):
    """No broker of ``bootstrap.servers`` answered when the job started."""


def check_reachable(client_conf: Mapping[str, object], timeout_ms: int) -> None:
    """Return once a broker answered a metadata request; :class:`KafkaUnreachable` past ``timeout_ms``."""
    seen: dict[str, int] = {}  # what the connection attempts met → how often

    def note(error: KafkaError) -> None:
        if error.code() != KafkaError._ALL_BROKERS_DOWN:  # says nothing the per-broker errors do not
            text = _TIMINGS.sub("", error.str())
            seen[text] = seen.get(text, 0) + 1

    consumer = Consumer(reader_config(client_conf, {"error_cb": note, "enable.auto.commit": False}))
    began = time.monotonic()
    try:
        while True:
            left = timeout_ms / 1000 - (time.monotonic() - began)
            try:
                consumer.list_topics(timeout=max(0.1, min(_ATTEMPT_SECONDS, left)))
                return
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                if not isinstance(error, KafkaError) or error.code() not in (KafkaError._TRANSPORT,
                                                                             KafkaError._TIMED_OUT):
                    raise  # e.g. an authentication failure: the broker answered, and said no
            consumer.poll(0)  # serves error_cb: what each connection attempt met
            if left <= _ATTEMPT_SECONDS:
                raise KafkaUnreachable(_unreachable(client_conf, timeout_ms, seen))
    finally:
        consumer.close()


def _unreachable(client_conf: Mapping[str, object], timeout_ms: int, seen: Mapping[str, int]) -> str:
    servers = client_conf.get("bootstrap.servers", "localhost:9092")
    if seen:
        tried = "; ".join(f"{text} (x{count})" if count > 1 else text for text, count in seen.items())
    else:
        tried = "no connection completed and none was refused (a firewall dropping packets, or a slow network?)"
    return (f"Cannot reach the Kafka cluster at bootstrap.servers={servers} within {timeout_ms / 1000:.0f}s "
            f"(icefloe.kafka.connect-timeout-ms): {tried}. Check bootstrap.servers (--bootstrap-servers or the "
            f"worker's), that the brokers run and listen there, and security.protocol")
