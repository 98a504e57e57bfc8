"""A sink connector's offsets as the REST API shows and changes them, where icefloe really resumes.

A job resumes from the tables' snapshot summaries first, then the
``connect-<name>`` consumer group, then the log start
(``Coordinator.start_offsets``). ``GET .../offsets`` reports the first two;
altering writes both (an offsets-only snapshot on each static table, which may
move offsets back, and the group), so the next run resumes exactly there;
resetting removes them from both, so the next run starts at the log start.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Any, Iterator, Mapping

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from connector.api.record import TopicPartition
from connector.commit.commit import commit_table
from connector.commit.coordinator import Coordinator
from connector.config.iceberg_config import existing_tables
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.herder.errors import BadRequestError, ConnectRestError
from connector.kafka.client_config import admin_config_from, consumer_config
from connector.kafka.group_offsets import commit_group_offsets, read_group_offsets
from connector.kafka.topics import UnknownTopicError, resolve_partitions
from connector.tolerance.transient import transient

EMPTY_ALTER = "Partitions / offsets need to be provided for an alter offsets request"
ALTERED = "The offsets for this connector have been altered successfully"
RESET = "The offsets for this connector have been reset successfully"


def not_stopped_message(name: str) -> str:
    return ("Connectors must be in the STOPPED state before their offsets can be modified. This can be done "
            f"for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")


class SinkOffsets:
    """Read and change one connector's offsets (its config resolved: placeholders already replaced)."""

    def __init__(self, config: SinkConfig):
        self.config = config
        self.client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
        self.catalog = load_catalog(config.props)

    def partitions(self) -> list[TopicPartition]:
        """The connector's partitions; none for a listed topic that does not exist (yet): it has no offsets."""
        try:
            return resolve_partitions(self.client_conf, list(self.config.connect.topics),
                                      self.config.connect.topics_regex)
        except UnknownTopicError:
            return []

    def current(self) -> dict[TopicPartition, int]:
        """Where each partition resumes, for those with an offset: the tables', else the group's."""
        partitions = self.partitions()
        coordinator = Coordinator(self.config, self.catalog, self.client_conf, max_tasks=1, split_large=False)
        from_tables = coordinator.table_offsets(partitions)
        missing = [tp for tp in partitions if tp not in from_tables]
        from_group = read_group_offsets(self.client_conf, self.config.group_id, missing) if missing else {}
        return dict(sorted({**from_group, **from_tables}.items()))

    def alter(self, changes: Mapping[TopicPartition, int | None]) -> None:
        """Set (or, for None, remove) the given partitions' offsets in every table and in the group."""
        self._write_tables(changes)
        self._write_group(changes)

    def reset(self) -> None:
        """Remove every partition's offsets from the tables and the group."""
        known = set(self.partitions()) | set(self.current())
        self._write_tables({tp: None for tp in known})
        self._delete_group()

    def _write_tables(self, changes: Mapping[TopicPartition, int | None]) -> None:
        commit_id = str(uuid.uuid4())
        for table_name, _, _ in existing_tables(self.catalog, self.config.iceberg):
            commit_table(self.catalog, self.config, table_name, [], changes, commit_id, None, rewind=True)

    def _write_group(self, changes: Mapping[TopicPartition, int | None]) -> None:
        removed = {tp for tp, offset in changes.items() if offset is None}
        kept: dict[TopicPartition, int] = {}
        if removed:  # the group API cannot unset one partition: drop the group, commit the rest again
            others = [tp for tp in self.partitions() if tp not in changes]
            kept = read_group_offsets(self.client_conf, self.config.group_id, others) if others else {}
            self._delete_group()
        kept.update({tp: offset for tp, offset in changes.items() if offset is not None})
        commit_group_offsets(self.client_conf, self.config.group_id, kept)

    def _delete_group(self) -> None:
        admin = AdminClient(admin_config_from(self.client_conf))
        futures = admin.delete_consumer_groups([self.config.group_id], request_timeout=30)
        for future in futures.values():
            try:
                future.result(timeout=30)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.GROUP_ID_NOT_FOUND:  # a group never made has nothing to reset
                    raise


# --- the REST answers, the same on a standalone and a distributed worker ------------------------------


def offsets_answer(config: SinkConfig) -> dict:
    """``GET /connectors/{name}/offsets``."""
    with offsets_store_reached(config.name, "retrieve"):
        return offsets_body(SinkOffsets(config).current())


def alter_answer(config: SinkConfig, changes: Mapping[TopicPartition, int | None]) -> dict:
    """``PATCH /connectors/{name}/offsets`` of a connector known to be stopped."""
    with offsets_store_reached(config.name, "alter"):
        SinkOffsets(config).alter(changes)
    return {"message": ALTERED}


def reset_answer(config: SinkConfig) -> dict:
    """``DELETE /connectors/{name}/offsets`` of a connector known to be stopped."""
    with offsets_store_reached(config.name, "reset"):
        SinkOffsets(config).reset()
    return {"message": RESET}


@contextmanager
def offsets_store_reached(name: str, verb: str) -> Iterator[None]:
    """A sink's offsets live in its tables (and the partitions they cover in Kafka): a catalog, storage or
    broker that cannot be reached gets Connect's answer to an offsets store it cannot read, a 500
    naming the connector and the cause."""
    try:
        yield
    except Exception as exc:
        if not transient(exc):
            raise
        raise ConnectRestError(f"Failed to {verb} the offsets of sink connector {name}, as what holds them "
                               f"could not be reached: {type(exc).__name__}: {exc}") from exc


def offsets_body(offsets: Mapping[TopicPartition, int]) -> dict:
    """``{"offsets": [{"partition": {"kafka_partition", "kafka_topic"}, "offset": {"kafka_offset"}}]}``.

    The key order is a Connect 3.9 worker's (``kafka_partition`` before ``kafka_topic``).
    """
    return {"offsets": [
        {"partition": {"kafka_partition": partition, "kafka_topic": topic}, "offset": {"kafka_offset": offset}}
        for (topic, partition), offset in sorted(offsets.items())
    ]}


def parse_alter_request(body: Any) -> dict[TopicPartition, int | None]:
    """The partitions and offsets of a PATCH body (``SinkUtils.parseSinkConnectorOffsets``'s rules)."""
    entries = body.get("offsets") if isinstance(body, dict) else None
    if not entries:
        raise BadRequestError(EMPTY_ALTER)
    changes: dict[TopicPartition, int | None] = {}
    for entry in entries:
        partition = entry.get("partition") if isinstance(entry, dict) else None
        if not isinstance(partition, dict) or "kafka_topic" not in partition or "kafka_partition" not in partition:
            raise BadRequestError("The partition for a sink connector offset must contain the keys "
                                  "'kafka_topic' and 'kafka_partition'.")
        topic = partition["kafka_topic"]
        if not isinstance(topic, str) or not topic:
            raise BadRequestError("Kafka topic names must be valid strings and may not be null")
        number = _integer(partition["kafka_partition"], "Kafka partitions must be valid numbers and may not be null")
        offset = entry.get("offset")
        if offset is None:
            changes[(topic, number)] = None
            continue
        if not isinstance(offset, dict) or "kafka_offset" not in offset:
            raise BadRequestError("The offset for a sink connector should either be null or contain the key "
                                  "'kafka_offset'.")
        changes[(topic, number)] = _integer(offset["kafka_offset"],
                                            "Kafka offsets must be valid numbers and may not be null")
    return changes


def _integer(value: Any, message: str) -> int:
    if isinstance(value, bool) or value is None:
        raise BadRequestError(message)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise BadRequestError(message) from None
    if number < 0:
        raise BadRequestError(message.replace("may not be null", "may not be negative"))
    return number
