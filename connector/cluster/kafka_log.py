"""A compacted Kafka topic read from its start into memory and written to, as Connect's ``KafkaBasedLog``.

Each worker reads the config, status and membership topics this way: a
background thread hands every record to a callback in offset order, and
:meth:`KafkaLog.read_to_end` waits until everything written before the call
has been handed over (read-your-writes after :meth:`KafkaLog.send`). The
consumer assigns the partitions itself and never joins a group: nothing waits
for a group coordinator (Tansu makes a new group wait half a session timeout).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

log = logging.getLogger(__name__)

OnRecord = Callable[[str | None, bytes | None, int], None]  # key, value, timestamp (ms)


class KafkaLog:
    """One topic: read into ``on_record`` from its start by a background thread; ``send`` writes a record."""

    def __init__(self, client_conf: Mapping[str, Any], topic: str, on_record: OnRecord):
        self.topic = topic
        self._on_record = on_record
        self._client_conf = dict(client_conf)
        self._positions: dict[int, int] = {}
        self._progress = threading.Condition()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._consumer: Consumer | None = None
        self._probe: Consumer | None = None
        self._producer: Producer | None = Producer({**self._client_conf, "acks": "all", "linger.ms": 0,
                                   # Java's partitioner: a key lands where a Connect worker would write it
                                   "partitioner": "murmur2_random"})
        self.failure: BaseException | None = None

    def start(self, timeout: float) -> None:
        """Assign every partition from its start, read to the end, then keep reading in the background."""
        consumer = Consumer({**self._client_conf, "group.id": f"icefloe-log-{self.topic}",
                             "enable.auto.commit": False, "enable.partition.eof": False,
                             "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100})
        metadata = consumer.list_topics(self.topic, timeout=timeout)
        partitions = sorted(metadata.topics[self.topic].partitions)
        consumer.assign([KafkaTopicPartition(self.topic, p, OFFSET_BEGINNING) for p in partitions])
        self._positions = {p: 0 for p in partitions}
        self._consumer = consumer
        # librdkafka does not answer a watermark query on a consumer another thread is consuming with
        self._probe = Consumer({**self._client_conf, "group.id": f"icefloe-log-{self.topic}"})
        self._thread = threading.Thread(target=self._read, name=f"kafka-log-{self.topic}", daemon=True)
        self._thread.start()
        self.read_to_end(timeout)

    def send(self, key: str, value: bytes | None, timeout: float = 30.0) -> int:
        """Write one record and wait for it to be acknowledged and read back; its offset."""
        delivered: list[Any] = []
        if self._producer is None:
            raise KafkaException(KafkaError(KafkaError._DESTROY, f"The log of {self.topic} is stopped"))
        self._producer.produce(self.topic, key=key.encode(), value=value,
                               on_delivery=lambda err, msg: delivered.append((err, msg)))
        self._producer.flush(timeout)
        if not delivered:
            raise KafkaException(KafkaError(KafkaError._TIMED_OUT, f"Writing {key} to {self.topic} timed out"))
        error, message = delivered[0]
        if error is not None:
            raise KafkaException(error)
        self._await({message.partition(): message.offset() + 1}, timeout)
        return int(message.offset())

    def read_to_end(self, timeout: float) -> None:
        """Wait until every record written before this call has been handed to ``on_record``."""
        assert self._probe is not None, "start() first"
        ends = {}
        for partition in self._positions:
            _low, high = self._probe.get_watermark_offsets(KafkaTopicPartition(self.topic, partition),
                                                              timeout=timeout, cached=False)
            ends[partition] = high
        self._await(ends, timeout)

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for consumer in (self._consumer, self._probe):
            if consumer is not None:
                consumer.close()
        if self._producer is not None:
            self._producer.flush(5)
            self._producer = None  # librdkafka's client ends with its last reference

    # --- the reading thread -----------------------------------------------------------------

    def _await(self, ends: Mapping[int, int], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._progress:
            while not all(self._positions.get(p, 0) >= end for p, end in ends.items()):
                if self.failure is not None:
                    raise KafkaException(KafkaError(KafkaError._FAIL, f"Reading {self.topic} failed: "
                                                                     f"{self.failure}"))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise KafkaException(KafkaError(KafkaError._TIMED_OUT, f"Reading {self.topic} to its end "
                                                                           f"took more than {timeout:.0f}s"))
                self._progress.wait(min(left, 0.5))

    def _read(self) -> None:
        assert self._consumer is not None
        while not self._stopping.is_set():
            try:
                messages = self._consumer.consume(500, timeout=0.1)
            except (KafkaException, RuntimeError) as exc:
                if self._stopping.is_set():
                    return
                log.warning("Reading %s: %s", self.topic, exc)
                time.sleep(0.5)
                continue
            for message in messages:
                self._handle(message)

    def _handle(self, message: Any) -> None:
        if message.error() is not None:
            if message.error().code() != KafkaError._PARTITION_EOF:
                log.warning("Reading %s: %s", self.topic, message.error())
            return
        key = message.key()
        try:
            self._on_record(key.decode() if key is not None else None, message.value(), message.timestamp()[1])
        except Exception as exc:  # noqa: BLE001 - a record we cannot apply must not stop the log
            log.exception("Applying record %r of %s failed", key, self.topic)
            self.failure = self.failure or exc
        with self._progress:
            self._positions[message.partition()] = message.offset() + 1
            self._progress.notify_all()


def ensure_topic(client_conf: Mapping[str, Any], topic: str, *, partitions: int, replication: int,
                 compacted: bool, timeout: float = 30.0) -> bool:
    """Create ``topic`` as Connect creates its internal topics when missing; True if it was created.

    Compacted where the broker takes ``cleanup.policy=compact``; a broker that refuses the setting gets the
    topic without it, with a warning (the topic then grows with every record).
    """
    admin = AdminClient(dict(client_conf))
    if topic in admin.list_topics(timeout=timeout).topics:
        return False
    config = {"cleanup.policy": "compact"} if compacted else {}
    for attempt in (config, {}) if config else ({},):
        future = admin.create_topics([NewTopic(topic, partitions, replication, config=attempt)],
                                     request_timeout=timeout)[topic]
        try:
            future.result(timeout)
        except KafkaException as exc:
            code = exc.args[0].code()
            if code == KafkaError.TOPIC_ALREADY_EXISTS:
                return False
            if attempt and code in (KafkaError.INVALID_CONFIG, KafkaError.POLICY_VIOLATION):
                log.warning("The broker refused cleanup.policy=compact for %s (%s): created without it",
                            topic, exc.args[0].str())
                continue
            raise
        log.info("Created the worker topic %s (%d partition(s), %s)", topic, partitions,
                 "compacted" if attempt else "not compacted")
        return True
    return False
