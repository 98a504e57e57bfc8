"""A stand-in for a stopped Apache Iceberg sink: its control topic, its table commits, its consumer group.

It writes what the Java sink's workers and coordinator would have left behind:
real Parquet data files (written through pyiceberg), the Iceberg event
encoding on the control topic (StartCommit, DataWritten, DataComplete,
CommitToTable, CommitComplete), snapshots carrying only the control-topic
key, and source offsets in ``connect-<name>`` committed with every
DataComplete (as the workers' transactions do).
"""

from __future__ import annotations

import itertools
import json
import select
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass, field

import pyarrow as pa
from confluent_kafka import Producer
from pyiceberg.io.pyarrow import _dataframe_to_data_files

from connector.kafka.group_offsets import commit_group_offsets
from connector.takeover.events import (
    CommitComplete,
    CommitToTable,
    DataComplete,
    DataFileInfo,
    DataWritten,
    Event,
    StartCommit,
    TableReference,
    TopicPartitionOffset,
    encode_event,
    payload_type,
)

COORDINATOR_PARTITION = 0


def file_info(data_file) -> DataFileInfo:
    """A pyiceberg DataFile as the event carries it."""
    def entries(mapping):
        return [{"key": k, "value": v} for k, v in sorted(mapping.items())] if mapping else None

    return DataFileInfo(
        path=data_file.file_path, file_format=data_file.file_format.value, record_count=data_file.record_count,
        file_size_in_bytes=data_file.file_size_in_bytes, content=0, partition={}, spec_id=0,
        fields={"column_sizes": entries(data_file.column_sizes), "value_counts": entries(data_file.value_counts),
                "null_value_counts": entries(data_file.null_value_counts),
                "nan_value_counts": entries(data_file.nan_value_counts),
                "lower_bounds": entries(data_file.lower_bounds), "upper_bounds": entries(data_file.upper_bounds),
                "split_offsets": data_file.split_offsets, "key_metadata": None, "equality_ids": None,
                "sort_order_id": None})


@dataclass
class JavaSink:
    bootstrap: str
    catalog: object
    name: str
    source_topic: str
    control_topic: str
    tables: list[str]
    workers: dict[int, int]  # source partition → control partition its worker writes to
    clock: itertools.count = field(default_factory=lambda: itertools.count(1_700_000_000_000_000, 1000))
    positions: dict[int, int] = field(default_factory=dict)  # control partition → next offset
    committed_control: dict[str, dict[int, int]] = field(default_factory=dict)
    tabular: bool = False  # Tabular's sink: events and snapshot keys of cg-control-<name>, offsets in both groups

    @property
    def group(self) -> str:
        return f"cg-control-{self.name}" if self.tabular else f"connect-{self.name}"

    def _send(self, partition: int, payload) -> int:
        event = Event(uuid.uuid4(), payload_type(payload), next(self.clock), self.group, payload)
        producer = Producer({"bootstrap.servers": self.bootstrap})
        delivered = {}
        producer.produce(self.control_topic, encode_event(event), key=b"k", partition=partition,
                         on_delivery=lambda err, msg: delivered.update(offset=msg.offset(), err=err))
        producer.flush(30)
        assert delivered.get("err") is None, delivered
        self.positions[partition] = delivered["offset"] + 1
        return delivered["offset"]

    def _files(self, table_name: str, ids: list[int]) -> list:
        table = self.catalog.load_table(table_name)
        frame = pa.Table.from_pylist([{"id": i} for i in ids], schema=table.schema().as_arrow())
        return list(_dataframe_to_data_files(table_metadata=table.metadata, df=frame, io=table.io,
                                             write_uuid=uuid.uuid4()))

    def start_commit(self) -> uuid.UUID:
        commit_id = uuid.uuid4()
        self._send(COORDINATOR_PARTITION, StartCommit(commit_id))
        return commit_id

    def worker_round(self, commit_id: uuid.UUID, partition: int, start: int, end: int, ids: list[int],
                     complete: bool = True) -> dict[str, list]:
        """One worker's answer for source ``partition``: DataWritten per table, DataComplete, group offsets."""
        control = self.workers[partition]
        written = {}
        for table_name in self.tables:
            files = self._files(table_name, ids)
            written[table_name] = files
            table = self.catalog.load_table(table_name)
            ref = TableReference("iceberg", tuple(table_name.split(".")[:-1]), table_name.split(".")[-1],
                                 uuid.UUID(str(table.metadata.table_uuid)))
            self._send(control, DataWritten(commit_id, ref, [file_info(f) for f in files], []))
        if complete:
            self._send(control, DataComplete(commit_id, [
                TopicPartitionOffset(self.source_topic, partition, end, 1_700_000_000_000_000 + end)]))
            conf = {"bootstrap.servers": self.bootstrap}
            for group in {self.group, f"connect-{self.name}"}:
                commit_group_offsets(conf, group, {(self.source_topic, partition): end})
        return written

    def coordinator_commit(self, commit_id: uuid.UUID, table_name: str, files: list) -> None:
        """The Java coordinator's commit of ``files`` to one table: control-topic offsets only."""
        table = self.catalog.load_table(table_name)
        recorded = self.committed_control.setdefault(table_name, {})
        for p, o in self.positions.items():
            recorded[p] = max(o, recorded.get(p, o))
        props = {f"kafka.connect.offsets.{self.control_topic}.{self.group}":
                 json.dumps({str(p): o for p, o in sorted(recorded.items())}),
                 "kafka.connect.commit-id": str(commit_id)}
        with table.transaction() as transaction:
            with transaction.update_snapshot(snapshot_properties=props).fast_append() as append:
                for data_file in files:
                    append.append_data_file(data_file)
        snapshot = self.catalog.load_table(table_name).current_snapshot()
        ref = TableReference("iceberg", tuple(table_name.split(".")[:-1]), table_name.split(".")[-1])
        self._send(COORDINATOR_PARTITION, CommitToTable(commit_id, ref, snapshot.snapshot_id, None))

    def commit_complete(self, commit_id: uuid.UUID) -> None:
        self._send(COORDINATOR_PARTITION, CommitComplete(commit_id, None))


_MEMBER = """
import sys, time
from confluent_kafka import Consumer
bootstrap, group, topics = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                     "session.timeout.ms": 10000, "heartbeat.interval.ms": 1000})
consumer.subscribe(topics)
while not consumer.assignment():
    consumer.poll(0.2)
print("joined", flush=True)
while True:
    consumer.poll(0.2)
"""


def kill_a_member(bootstrap: str, group: str, topics: list[str], timeout: float = 60.0) -> None:
    """Leave ``group`` with a member that joined, was given partitions and was then SIGKILLed without
    leaving, as a Java worker killed mid-stream does (its process, not a thread: a live librdkafka
    client would heartbeat on and leave when closed)."""
    member = subprocess.Popen([sys.executable, "-c", _MEMBER, bootstrap, group, ",".join(topics)],
                              stdout=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([member.stdout], [], [], timeout)
        assert ready and member.stdout is not None and member.stdout.readline().strip() == "joined", \
            "the member did not join its group"
    finally:
        member.send_signal(signal.SIGKILL)
        member.wait()
