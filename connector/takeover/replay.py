"""Finish what a stopped Java Iceberg sink's coordinator left undone, then resume where its commits end.

A Java sink's workers send their files (``DataWritten``) and then
``DataComplete`` — with the next source offset of every partition they hold —
to the control topic, and commit those source offsets to the connector's
consumer group in the same Kafka transaction, *before* the coordinator commits
the files to Iceberg. Stopping the connector does not flush a final commit, so
the group can be ahead of the tables: starting from it would skip records.

:func:`plan` reads the control topic of the connector's group and replays the
coordinator: ``DataWritten`` events are buffered; a commit is *complete* when
its ``DataComplete`` events cover every partition of the connector's topics,
and then the whole buffer is committed (as Java does, late files of an older
commit included). Per table, exactly as ``Coordinator.commitToTable``: a
missing table is skipped; a table whose uuid differs from the event's (the
table was recreated) is skipped; events below the table's committed
control-topic offsets (its ``kafka.connect.offsets.<control-topic>.<group>``
key) are already in the table and dropped; files are de-duplicated by path
and empty ones dropped. Files still buffered at the end belong to incomplete
commits and are not committed: their records are read again.

:func:`apply` commits each complete commit to each table (one snapshot per
table per commit, as Java would), recording the control-topic offsets merged
by maximum (so a rollback to the Java sink does not commit them again) and the
source offsets the complete commits cover (icefloe's own keys, from which the
job then resumes). A last snapshot per table records those source offsets
(for the static tables that got no files, too) and raises the control-topic
key to the end of what was read, so that a rollback to the Java sink adds
neither these commits nor the abandoned incomplete one again; then it mirrors
them to the connector's consumer groups (``connect-<name>``, and Tabular's
``cg-control-<name>``, which a Tabular connector reads first).

Where each source partition resumes: the newest offset a complete commit
recorded for it. A partition that no complete commit in the replayed window
mentions with an offset resumes from the consumer group, unless an incomplete
commit holds its records: then its position before that commit is unknown and
the takeover stops with an error naming it.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from confluent_kafka import KafkaException
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.typedef import Record

from connector.api.errors import ConnectException
from connector.api.record import TopicPartition
from connector.commit.commit import commit_table
from connector.commit.fencing import Fence, TableNote
from connector.commit.resume_groups import resume_groups
from connector.config.iceberg_config import existing_tables
from connector.config.sink_config import SinkConfig
from connector.iceberg.snapshot_offsets import (
    committed_offsets,
    control_offsets,
    java_control_properties,
    java_keys,
    offsets_key,
)
from connector.kafka.group_offsets import read_group_offsets
from connector.kafka.offsets import OffsetRange, earliest_offsets, end_offsets
from connector.kafka.range_reader import read_range
from connector.kafka.topics import resolve_partitions
from connector.takeover.events import (
    DataComplete,
    DataFileInfo,
    DataWritten,
    Event,
    EventFormatError,
    StartCommit,
    decode_event,
)

log = logging.getLogger(__name__)

#: How long a takeover waits to join a group a killed Java worker is still a member of: beyond Connect's
#: consumer session timeout (45 s by default), after which real Kafka drops the member anyway.
MEMBER_COMMIT_TIMEOUT = 60.0


class TakeoverError(ConnectException):
    """The control topic does not say where a partition resumes."""


@dataclass
class Envelope:
    partition: int  # control-topic partition
    offset: int
    event: Event


@dataclass
class PlannedCommit:
    commit_id: uuid.UUID
    group: str
    tables: dict[str, list[DataFileInfo]]  # table → files to add (after the per-table filtering)
    control_positions: dict[int, int]  # control partition → next offset, when the commit became complete
    source_offsets: dict[TopicPartition, int]  # where the source partitions stand after this commit
    valid_through_ms: int | None
    already_held: dict[str, int] = field(default_factory=dict)  # table → files dropped as already committed


@dataclass
class TakeoverPlan:
    control_topic: str
    control_start: dict[int, int]
    control_end: dict[int, int]
    commits: list[PlannedCommit]
    incomplete: dict[str, int]  # commit id → files not committed
    resume: dict[TopicPartition, int]
    events: int = 0
    groups: list[str] = field(default_factory=list)  # the Java groups whose events were read
    group_outcomes: dict[str, str] = field(default_factory=dict)  # consumer group → how setting it went

    @property
    def found_events(self) -> bool:
        return self.events > 0

    def describe(self) -> str:
        lines = [f"control topic {self.control_topic}: {self.events} event(s) of this connector read from "
                 f"{_positions(self.control_start)} to {_positions(self.control_end)}"]
        for commit in self.commits:
            files = ", ".join(f"{t}: {len(f)} file(s)" + (f" ({commit.already_held[t]} already held)"
                                                           if commit.already_held.get(t) else "")
                              for t, f in sorted(commit.tables.items())) or "nothing left to add"
            lines.append(f"complete commit {commit.commit_id}: {files}")
        for commit_id, count in sorted(self.incomplete.items()):
            lines.append(f"incomplete commit {commit_id}: {count} file(s) not committed, their records are read "
                         f"again")
        lines.append("resume from " + (", ".join(f"{t}[{p}]@{o}" for (t, p), o in sorted(self.resume.items()))
                                       or "the consumer group"))
        return "\n".join(lines)


    def summary(self) -> str:
        """What the takeover found and did, in one line (after :func:`apply`)."""
        files = sum(len(f) for c in self.commits for f in c.tables.values())
        parts = [f"{self.events} event(s) on control topic {self.control_topic} from {_positions(self.control_start)} "
                 f"to {_positions(self.control_end)}",
                 f"{len(self.commits)} complete Java commit(s) finished ({files} file(s) added)"]
        if self.incomplete:
            parts.append("in-flight Java commit " + ", ".join(
                f"{commit_id} ({count} file(s) not committed)" for commit_id, count in sorted(self.incomplete.items()))
                + ": its records are read again")
        else:
            parts.append("no in-flight Java commit")
        parts.append("resume from " + (", ".join(f"{t}[{p}]@{o}" for (t, p), o in sorted(self.resume.items()))
                                       or "the consumer group"))
        parts += [f"consumer group {group} {outcome}" for group, outcome in self.group_outcomes.items()]
        return "; ".join(parts)


def _positions(offsets: Mapping[int, int]) -> str:
    return "{" + ", ".join(f"{p}: {o}" for p, o in sorted(offsets.items())) + "}"


# --- reading --------------------------------------------------------------------------------------


def control_partitions(client_conf: Mapping[str, object], topic: str) -> list[TopicPartition]:
    """The control topic's partitions; none when it does not exist."""
    from connector.kafka.topics import UnknownTopicError

    try:
        return resolve_partitions(client_conf, [topic], None)
    except UnknownTopicError:
        return []


def read_events(client_conf: Mapping[str, object], groups: Iterable[str],
                ranges: Iterable[OffsetRange]) -> list[Envelope]:
    """The decodable events of ``groups`` in ``ranges`` (read committed), in the order Java would meet them."""
    wanted = set(groups)
    conf = {**client_conf, "isolation.level": "read_committed"}
    envelopes: list[Envelope] = []
    for rng in ranges:
        for batch in read_range(conf, rng):
            for offset, value in zip(batch.column("offset").to_pylist(), batch.column("value").to_pylist()):
                if value is None:
                    continue
                try:
                    event = decode_event(value)
                except EventFormatError as exc:
                    _unreadable(rng, offset, value, wanted, exc)
                    continue
                if event.group_id in wanted:
                    envelopes.append(Envelope(rng.partition, offset, event))
    # one partition's events in order; partitions interleaved by event time, as a consumer would
    envelopes.sort(key=lambda e: (e.event.timestamp, e.partition, e.offset))
    return envelopes


def _unreadable(rng: OffsetRange, offset: int, value: bytes, groups: set[str], exc: EventFormatError) -> None:
    """A control record that does not decode: skipped when it is another connector's, else the takeover stops.

    Skipping one of this connector's events (Tabular's legacy format, before v0.6.17, say) could drop the
    files of a commit the Java coordinator never finished, whose records the group's offsets already
    passed: they would be lost. Its group id, a plain string in every event format, tells whose it is.
    """
    mine = sorted(g for g in groups if g.encode() in value)
    if not mine:
        log.warning("Skipping control record %s[%d]@%d (not this connector's): %s", rng.topic, rng.partition,
                    offset, exc)
        return
    raise TakeoverError(
        f"Control record {rng.topic}[{rng.partition}]@{offset} of group {mine[0]} cannot be read ({exc}); it may "
        f"announce files of a commit the Java sink never finished, so taking over could lose its records. Let the "
        f"Java sink finish a commit before stopping it (then nothing is left to replay) and start icefloe with "
        f"icefloe.takeover=none")


# --- planning -------------------------------------------------------------------------------------


def plan(catalog, config: SinkConfig, client_conf: Mapping[str, object],
         source_partitions: Iterable[TopicPartition]) -> TakeoverPlan:
    """What finishing the Java coordinator's work means for this connector now (changes nothing)."""
    java = java_keys(config)
    topic = config.iceberg.control_topic
    partitions = control_partitions(client_conf, topic)
    expected = set(source_partitions)
    if not partitions:
        return TakeoverPlan(topic, {}, {}, [], {}, {})
    held = {name: _table_state(catalog, config, name) for name in config.iceberg.tables}
    committed_only = {**client_conf, "isolation.level": "read_committed"}  # the end: the last stable offset
    first = earliest_offsets(client_conf, partitions)
    end = end_offsets(committed_only, partitions)
    # The Java coordinator resumes from its "<group>-coord" group and filters per table; read from the
    # lowest control offset a table records, or from that group where a table records none.
    coord: dict[TopicPartition, int] = {}
    for group in java.groups:
        for tp, position_ in read_group_offsets(client_conf, f"{group}-coord", partitions).items():
            coord[tp] = min(position_, coord.get(tp, position_))
    start: dict[int, int] = {}
    for tp in partitions:
        recorded = [offsets[tp[1]] for state in held.values() if state for offsets in state[1].values()
                    if tp[1] in offsets]
        lacking = any(state and not any(tp[1] in offsets for offsets in state[1].values())
                      for state in held.values())
        if lacking or not recorded:
            recorded.append(coord.get(tp, first[tp]))
        start[tp[1]] = max(first[tp], min(recorded))
    ranges = [OffsetRange(topic, p, start[p], end[(topic, p)]) for p in sorted(start) if end[(topic, p)] > start[p]]
    envelopes = read_events(client_conf, java.groups, ranges)

    commits: list[PlannedCommit] = []
    buffer: list[Envelope] = []
    coverage: dict[uuid.UUID, dict[TopicPartition, tuple[int | None, int | None]]] = {}
    done: set[uuid.UUID] = set()
    position = dict(start)
    resume: dict[TopicPartition, int] = {}
    started: dict[uuid.UUID, int] = {}  # commit id → order of its StartCommit
    for envelope in envelopes:
        position[envelope.partition] = max(position.get(envelope.partition, 0), envelope.offset + 1)
        payload = envelope.event.payload
        if isinstance(payload, StartCommit):
            started.setdefault(payload.commit_id, len(started))
        elif isinstance(payload, DataWritten):
            buffer.append(envelope)
        elif isinstance(payload, DataComplete) and payload.commit_id not in done:
            covered = coverage.setdefault(payload.commit_id, {})
            for a in payload.assignments:
                covered[(a.topic, a.partition)] = (a.offset, a.timestamp)
            if expected and expected <= set(covered):
                done.add(payload.commit_id)
                for tp, (offset, _) in covered.items():
                    if offset is not None and tp in expected:
                        resume[tp] = max(offset, resume.get(tp, offset))
                # the buffer, as Java commits it: late files of older commits too, never a later commit's
                later = [e for e in buffer if _later(e, started, started.get(payload.commit_id, -1))]
                commits.append(_planned(catalog, config, held, envelope.event.group_id, payload.commit_id,
                                        [e for e in buffer if e not in later], dict(position), dict(resume),
                                        covered))
                buffer = later
    incomplete: dict[str, int] = {}
    for envelope in buffer:
        payload = envelope.event.payload
        assert isinstance(payload, DataWritten)
        incomplete[str(payload.commit_id)] = incomplete.get(str(payload.commit_id), 0) + len(payload.data_files)
    unknown = sorted(tp for commit_id, covered in coverage.items() if commit_id not in done
                     for tp, (offset, _) in covered.items()
                     if offset is not None and tp in expected and tp not in resume)
    if unknown:
        raise TakeoverError(
            "Cannot take over from the Java sink exactly: an incomplete commit on control topic "
            f"{topic} holds records of {', '.join(f'{t}[{p}]' for t, p in unknown)}, and no complete commit "
            "since the tables' control-topic offsets says where those partitions stood before it. Set their "
            f"offsets in the consumer group {config.group_id} and run with icefloe.takeover=none.")
    return TakeoverPlan(topic, start, {p: end[(topic, p)] for p in start}, commits, incomplete, resume,
                        events=len(envelopes), groups=sorted({e.event.group_id for e in envelopes}))


def _later(envelope: Envelope, started: Mapping[uuid.UUID, int], order: int) -> bool:
    """Whether ``envelope`` belongs to a commit started after the one of ``order``."""
    written = envelope.event.payload
    return isinstance(written, DataWritten) and started.get(written.commit_id, -1) > order


def _table_state(catalog, config: SinkConfig, name: str):
    """(table, {group: control offsets}) or None when the table does not exist."""
    try:
        table = catalog.load_table(name)
    except NoSuchTableError:
        return None
    branch = config.iceberg.table_config(name).commit_branch
    return table, control_offsets(table, java_keys(config), branch)


def _planned(catalog, config: SinkConfig, held: dict, group: str, commit_id: uuid.UUID, buffer: list[Envelope],
             positions: dict[int, int], resume: dict[TopicPartition, int],
             covered: Mapping[TopicPartition, tuple[int | None, int | None]]) -> PlannedCommit:
    by_table: dict[str, list[Envelope]] = {}
    for envelope in buffer:
        payload = envelope.event.payload
        assert isinstance(payload, DataWritten)
        by_table.setdefault(payload.table.identifier, []).append(envelope)
    stamps = [ts for offset, ts in covered.values()]
    valid_through = None if not stamps or any(ts is None for ts in stamps) else min(stamps) // 1000  # type: ignore
    planned = PlannedCommit(commit_id, group, {}, positions, resume, valid_through)
    for name, envelopes in sorted(by_table.items()):
        if name not in held:
            held[name] = _table_state(catalog, config, name)
        state = held[name]
        if state is None:
            log.warning("Table %s of commit %s does not exist; its files are skipped, as the Java sink does",
                        name, commit_id)
            continue
        table, control = state
        committed = control.get(group, {})
        files: dict[str, DataFileInfo] = {}
        dropped = 0
        for envelope in envelopes:
            payload = envelope.event.payload
            assert isinstance(payload, DataWritten)
            if payload.table.uuid is not None and str(payload.table.uuid) != str(table.metadata.table_uuid):
                log.warning("Table %s was recreated since commit %s; its files are skipped", name, commit_id)
                continue
            if envelope.offset < committed.get(envelope.partition, -1):
                dropped += len(payload.data_files)
                continue
            for info in [*payload.data_files, *payload.delete_files]:
                if info.record_count > 0:
                    files.setdefault(info.path, info)
        if any(f.content != 0 for f in files.values()):
            raise TakeoverError(f"Commit {commit_id} holds delete files for {name}; icefloe cannot commit "
                                "row deltas yet")
        planned.tables[name] = list(files.values())
        if dropped:
            planned.already_held[name] = dropped
    return planned


# --- applying -------------------------------------------------------------------------------------


def apply(catalog, config: SinkConfig, client_conf: Mapping[str, object], takeover: TakeoverPlan) -> None:
    """Commit the plan's complete commits, record where each table resumes, mirror it to the group."""
    java = java_keys(config)
    fence = Fence(start={})
    touched: set[str] = set()
    for commit in takeover.commits:
        for name, infos in sorted(commit.tables.items()):
            table = catalog.load_table(name)
            branch = config.iceberg.table_config(name).commit_branch
            if name not in fence.tables:  # as planned: nobody may commit to it while we replay
                fence.tables[name] = TableNote(committed_offsets(table, config.group_id, branch, java),
                                               java_control_properties(table, java, branch))
            key = offsets_key(takeover.control_topic, commit.group)
            recorded = control_offsets(table, java, branch).get(commit.group, {})
            merged = {p: max(o, recorded.get(p, o)) for p, o in commit.control_positions.items()}
            merged.update({p: o for p, o in recorded.items() if p not in merged})
            control = json.dumps({str(p): o for p, o in sorted(merged.items())}, separators=(",", ":"))
            commit_table(catalog, config, name, [_data_file(table, info) for info in infos], commit.source_offsets,
                         str(commit.commit_id), commit.valid_through_ms, {key: control}, fence=fence)
            table = catalog.load_table(name)
            fence.tables[name] = TableNote(committed_offsets(table, config.group_id, branch, java),
                                           java_control_properties(table, java, branch))
            touched.add(name)
            log.info("Takeover: committed %d file(s) of Java commit %s to %s", len(infos), commit.commit_id, name)
    # Every table: the source offsets it resumes from, and the Java key raised to the end of what was
    # read, so that a rollback to the Java sink adds neither these commits nor the abandoned incomplete
    # one (whose records icefloe reads again) to the table.
    for name in sorted(set(config.iceberg.tables) | touched):
        if not catalog.table_exists(name):
            continue
        table = catalog.load_table(name)
        branch = config.iceberg.table_config(name).commit_branch
        held_control = control_offsets(table, java, branch)
        extra = {}
        for group in takeover.groups:
            merged = dict(held_control.get(group, {}))
            for p, o in takeover.control_end.items():
                merged[p] = max(o, merged.get(p, o))
            extra[offsets_key(takeover.control_topic, group)] = json.dumps(
                {str(p): o for p, o in sorted(merged.items())}, separators=(",", ":"))
        commit_table(catalog, config, name, [], takeover.resume, f"takeover-{uuid.uuid4()}", None, extra,
                     fence=fence if name in touched else None)
    if not takeover.resume:
        return
    for group in resume_groups(config):  # Tabular's group too: it is read first
        takeover.group_outcomes[group] = _set_group(client_conf, group, takeover.resume)


def _set_group(client_conf: Mapping[str, object], group: str, offsets: Mapping[TopicPartition, int]) -> str:
    """Set ``group`` to where the tables resume; what happened, for the takeover's line.

    A Java worker killed without leaving the group is still a member of it until the broker expires
    its session (Tansu: until a rebalance), and the broker refuses a commit from outside the group
    meanwhile: the Java sink is stopped, so icefloe joins the group to commit (the rebalance drops the
    dead member) and leaves it empty, which every later cycle's mirror needs.
    """
    from connector.kafka.group_offsets import commit_as_member, commit_group_offsets, group_occupied

    try:
        commit_group_offsets(client_conf, group, offsets)
        return "set"
    except (KafkaException, ConnectException) as exc:  # the tables already hold the positions
        if not group_occupied(exc):
            return f"not set ({exc}); the cycles' mirror retries it"
    try:
        seconds = commit_as_member(client_conf, group, offsets, timeout=MEMBER_COMMIT_TIMEOUT)
    except (KafkaException, ConnectException) as exc:
        return f"not set: it still has a member ({exc}); the cycles' mirror retries it"
    return f"set by joining it ({seconds:.0f} s): a member of the stopped Java sink was still registered"


def _data_file(table, info: DataFileInfo) -> DataFile:
    """The event's file as a pyiceberg DataFile of ``table`` (stats as the Java writer recorded them)."""
    spec_id = info.spec_id if info.spec_id is not None else table.metadata.default_spec_id
    spec = table.metadata.specs()[spec_id]
    partition = Record(*[info.partition.get(f.name) for f in spec.fields])
    raw = info.fields

    def counts(name: str) -> dict[int, int] | None:
        return {e["key"]: e["value"] for e in raw[name]} if raw.get(name) is not None else None

    data_file = DataFile.from_args(
        _table_format_version=table.metadata.format_version,
        content=DataFileContent.DATA,
        file_path=info.path,
        file_format=FileFormat(info.file_format.upper()),
        partition=partition,
        record_count=info.record_count,
        file_size_in_bytes=info.file_size_in_bytes,
        column_sizes=counts("column_sizes"),
        value_counts=counts("value_counts"),
        null_value_counts=counts("null_value_counts"),
        nan_value_counts=counts("nan_value_counts"),
        lower_bounds=counts("lower_bounds"),
        upper_bounds=counts("upper_bounds"),
        key_metadata=raw.get("key_metadata"),
        split_offsets=raw.get("split_offsets"),
        equality_ids=raw.get("equality_ids"),
        sort_order_id=raw.get("sort_order_id"),
    )
    data_file.spec_id = spec_id
    return data_file


# --- when ---------------------------------------------------------------------------------------------


def take_over_if_needed(catalog, config: SinkConfig, client_conf: Mapping[str, object],
                        source_partitions: Iterable[TopicPartition]) -> TakeoverPlan | None:
    """Run the takeover when ``icefloe.takeover`` asks for it; the plan applied, or None."""
    from connector.iceberg.snapshot_offsets import java_snapshot_is_newest

    mode = config.icefloe.takeover
    if mode == "none":
        return None
    if mode == "auto":
        java = java_keys(config)
        java_newest = icefloe_offsets = False
        for _, table, branch in existing_tables(catalog, config.iceberg):
            java_newest = java_newest or java_snapshot_is_newest(table, config.group_id, java, branch)
            icefloe_offsets = icefloe_offsets or bool(committed_offsets(table, config.group_id, branch, java))
        if icefloe_offsets and not java_newest:
            return None
    takeover = plan(catalog, config, client_conf, source_partitions)
    if not takeover.found_events:
        log.info("Takeover: no event of this connector on control topic %s: no Java commit to finish, no "
                 "in-flight Java commit", takeover.control_topic)
        return None
    log.debug("Taking over from the Java sink:\n%s", takeover.describe())
    apply(catalog, config, client_conf, takeover)
    log.info("Takeover of the Java sink: %s", takeover.summary())
    return takeover
