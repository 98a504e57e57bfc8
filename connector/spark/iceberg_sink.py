"""``icefloe-iceberg``: the Iceberg sink as a Spark Python Data Source writer (batch and streaming).

The input is raw Kafka records (the columns of ``icefloe-kafka``: ``topic``,
``partition``, ``offset``, ``value`` and optionally ``key``, ``timestamp``,
``timestamp_type``, ``headers``); the options are a whole Kafka Connect
connector config plus worker keys. Each Spark partition runs the connector's
task pipeline (converters → SMTs → router → Iceberg rows → Parquet files) over
its Arrow batches; when a batch needs a table created or evolved, the task
applies the change to the catalog itself (concurrent tasks' identical changes
are idempotent) and processes the batch again. The task's commit message
carries its data files per table, the next offset per source partition
(largest offset seen + 1) and the newest record timestamps.

On the driver, ``commit()`` makes one Iceberg fast append per table with every
task's files and the offsets in the snapshot summary (the keys of the
coordinator and of the Iceberg Kafka Connect sink), then mirrors the offsets to
the ``connect-<name>`` consumer group. ``abort()`` deletes the files the
successful tasks wrote.

Exactly-once: records below a table's committed offsets are skipped by the
tasks (the table is the source of truth, as for ``icefloe run``); a streaming
commit also records the Spark batch id and the query id in the snapshot
summary and is skipped when the table already has that batch (Spark re-runs
the last batch after a crash).

Spark lower-cases option keys. Keys whose middle part is a name
(``iceberg.table.<table>.*``, ``transforms.<alias>.*``,
``predicates.<alias>.*``) get their case back from the names listed in
``iceberg.tables``, ``transforms`` and ``predicates``; for anything else pass
the config as JSON in the option ``icefloe.config`` (or a file path in
``icefloe.config.file``), whose keys keep their case.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from connector.api.errors import ConfigException, DataException
from connector.api.record import TopicPartition
from connector.commit.commit import CommitBatch, commit_tables, schema_rounds
from connector.commit.group_mirror import GroupMirror
from connector.commit.messages import TaskResult
from connector.config.locations import local_path
from connector.config.sink_config import SinkConfig, load_connector_file
from connector.data.catalog import load_catalog
from connector.data.write.table_writer import SchemaNeeds
from connector.iceberg.snapshot_offsets import committed_offsets, java_keys, summaries
from connector.kafka.range_reader import HEADERS_TYPE, RAW_SCHEMA
from connector.task import new_pipeline

log = logging.getLogger(__name__)


#: Snapshot summary keys of a streaming commit.
SPARK_QUERY_ID = "icefloe.spark.query-id"
SPARK_BATCH_ID = "icefloe.spark.batch-id"

#: Options that are icefloe's or Spark's, not the connector's.
CONFIG_JSON_OPTION = "icefloe.config"
CONFIG_FILE_OPTION = "icefloe.config.file"
QUERY_ID_OPTION = "icefloe.spark.query-id"
_NOT_CONNECTOR_KEYS = {"path", "checkpointlocation", "queryname", CONFIG_JSON_OPTION, CONFIG_FILE_OPTION,
                       QUERY_ID_OPTION}

#: Worker-level keys (a Connect worker's properties file) that may be passed as options.
_WORKER_KEYS = {"bootstrap.servers", "security.protocol", "client.dns.lookup",
                "connector.client.config.override.policy"}
_WORKER_PREFIXES = ("sasl.", "ssl.", "consumer.", "admin.", "producer.")
_CONNECTOR_PREFIXES = ("consumer.override.", "admin.override.", "producer.override.")

PROCESS_ROWS = 50_000  # rows gathered from Spark's Arrow batches (10k by default) before converting


# ---------------------------------------------------------------------------------------
# Options → connector config
# ---------------------------------------------------------------------------------------
def split_options(options: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Spark options → (connector props, worker props), with the case of name-bearing keys restored."""
    options = {str(k): str(v) for k, v in options.items()}
    lowered = {k.lower(): v for k, v in options.items()}
    base: dict[str, str] = {}
    if CONFIG_FILE_OPTION in lowered:
        base.update(load_connector_file(lowered[CONFIG_FILE_OPTION]))
    if CONFIG_JSON_OPTION in lowered:
        base.update(_config_json(lowered[CONFIG_JSON_OPTION]))
    given = {k: v for k, v in options.items() if k.lower() not in _NOT_CONNECTOR_KEYS}
    names = _names({**base, **{k.lower(): v for k, v in given.items()}})
    merged = dict(base)
    merged.update({restore_key_case(k, names): v for k, v in given.items()})
    worker = {k: v for k, v in merged.items() if _is_worker_key(k)}
    props = {k: v for k, v in merged.items() if not _is_worker_key(k)}
    props.setdefault("connector.class", "org.apache.iceberg.connect.IcebergSinkConnector")
    if not props.get("topics", "").strip() and not props.get("topics.regex", "").strip():
        props["topics.regex"] = ".*"  # the input DataFrame decides which topics are written
    return props, worker


def _config_json(text: str) -> dict[str, str]:
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ConfigException(CONFIG_JSON_OPTION, text[:80], f"is not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ConfigException(CONFIG_JSON_OPTION, text[:80], "must be a JSON object")
    if isinstance(document.get("config"), dict):  # the REST body {"name": ..., "config": {...}}
        props = dict(document["config"])
        if "name" in document:
            props.setdefault("name", document["name"])
        document = props
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in document.items()}


def _is_worker_key(key: str) -> bool:
    if key.startswith(_CONNECTOR_PREFIXES):
        return False
    return key in _WORKER_KEYS or key.startswith(_WORKER_PREFIXES)


def _names(props: Mapping[str, str]) -> dict[str, list[str]]:
    def listed(key: str) -> list[str]:
        return [item.strip() for item in props.get(key, "").split(",") if item.strip()]

    return {"iceberg.table.": listed("iceberg.tables"), "transforms.": listed("transforms"),
            "predicates.": listed("predicates")}


def restore_key_case(key: str, names: Mapping[str, list[str]]) -> str:
    """``iceberg.table.db.events.route-regex`` → ``iceberg.table.db.Events.route-regex``.

    (When ``db.Events`` is listed in ``iceberg.tables``; likewise for transform and predicate aliases.)
    """
    for prefix, candidates in names.items():
        if not key.lower().startswith(prefix):
            continue
        rest = key[len(prefix):]
        for name in sorted(candidates, key=len, reverse=True):
            if rest.lower().startswith(name.lower() + "."):
                return prefix + name + rest[len(name):]
    return key


# ---------------------------------------------------------------------------------------
# Input columns
# ---------------------------------------------------------------------------------------
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
_ACCEPTED: dict[str, tuple[type[DataType], ...]] = {
    "topic": (StringType,),
    "partition": _INTEGRAL,
    "offset": _INTEGRAL,
    "value": (BinaryType, StringType),
    "key": (BinaryType, StringType),
    "timestamp": (LongType, IntegerType, TimestampType, TimestampNTZType),
    "timestamp_type": _INTEGRAL,
    "headers": (ArrayType,),
}
REQUIRED_COLUMNS = ("topic", "partition", "offset", "value")
_EXPECTED = ("topic string, partition int, offset bigint, value binary, and optionally key binary, "
             "timestamp bigint (epoch ms), timestamp_type tinyint, headers array<struct<key:string,value:binary>>")


def input_columns(schema: StructType) -> dict[str, str]:
    """Raw column name → the input's column name (matched case-insensitively); raises naming what is wrong."""
    actual = {f.name.lower(): f for f in schema.fields}
    missing = [name for name in REQUIRED_COLUMNS if name not in actual]
    if missing:
        raise ConfigException(
            f"icefloe-iceberg: the input has no column {', '.join(repr(m) for m in missing)}. "
            f"The sink writes raw Kafka records, the columns of format icefloe-kafka: {_EXPECTED}. "
            f"Input columns: {', '.join(schema.fieldNames()) or '(none)'}"
        )
    columns = {}
    for name, accepted in _ACCEPTED.items():
        fld = actual.get(name)
        if fld is None:
            continue
        if not isinstance(fld.dataType, accepted) or (name == "headers" and not _headers_ok(fld.dataType)):
            raise ConfigException(
                f"icefloe-iceberg: column '{fld.name}' has type {fld.dataType.simpleString()}; expected {_EXPECTED}"
            )
        columns[name] = fld.name
    return columns


def _headers_ok(data_type: DataType) -> bool:
    if not isinstance(data_type, ArrayType):
        return False
    element = data_type.elementType
    if not isinstance(element, StructType):
        return False
    types = {f.name: f.dataType for f in element.fields}
    return isinstance(types.get("key"), StringType) and isinstance(types.get("value"), (BinaryType, StringType))


def conform(batch: pa.RecordBatch, columns: Mapping[str, str]) -> pa.RecordBatch:
    """A Spark Arrow batch → a :data:`RAW_SCHEMA` batch (missing optional columns get defaults)."""
    rows = batch.num_rows
    arrays: list[pa.Array] = []
    for fld in RAW_SCHEMA:
        name = columns.get(fld.name)
        if name is None:
            arrays.append(_default_column(fld.name, rows, arrays))
            continue
        array = batch.column(name)
        if fld.name == "timestamp" and pa.types.is_timestamp(array.type):
            array = array.cast(pa.timestamp("ms", tz=array.type.tz), safe=False)
        if fld.name in ("topic", "partition", "offset") and array.null_count:
            raise DataException(f"icefloe-iceberg: column '{name}' has null values")
        if fld.name == "headers" and array.null_count:
            array = pc.fill_null(array, pa.scalar([], type=array.type))
        if fld.name == "timestamp_type" and array.null_count:
            array = pc.fill_null(array, 0)
        arrays.append(array.cast(fld.type) if array.type != fld.type else array)
    return pa.RecordBatch.from_arrays(arrays, schema=RAW_SCHEMA)


def _default_column(name: str, rows: int, previous: list) -> pa.Array:
    if name == "timestamp_type":  # CREATE_TIME where there is a timestamp, else NO_TIMESTAMP_TYPE
        timestamps = previous[RAW_SCHEMA.get_field_index("timestamp")]  # filled in before timestamp_type
        return pc.if_else(pc.is_valid(timestamps), pa.scalar(1, pa.int8()), pa.scalar(0, pa.int8()))
    if name == "headers":
        return pa.array([[]] * rows, HEADERS_TYPE)
    return pa.nulls(rows, RAW_SCHEMA.field(name).type)


def split_by_partition(batch: pa.RecordBatch) -> list[pa.RecordBatch]:
    """One batch per (topic, partition), each in offset order (the task's converters expect that)."""
    topics, partitions = batch.column("topic"), batch.column("partition")
    bounds = pc.min_max(partitions)
    if pc.count_distinct(topics).as_py() <= 1 and bounds["min"] == bounds["max"]:
        return [batch]
    order = pc.sort_indices(batch, sort_keys=[("topic", "ascending"), ("partition", "ascending"),
                                               ("offset", "ascending")])
    ordered = pa.Table.from_batches([batch.take(order)])
    runs = ordered.group_by(["topic", "partition"], use_threads=False).aggregate([("offset", "count")])
    pieces, position = [], 0
    for count in runs.column("offset_count").to_pylist():
        pieces.append(ordered.slice(position, count).combine_chunks().to_batches()[0])
        position += count
    return pieces


# ---------------------------------------------------------------------------------------
# Commit messages
# ---------------------------------------------------------------------------------------
@dataclass
class SparkTaskResult(TaskResult, WriterCommitMessage):
    """A task's result, as the commit message type Spark requires (a ``WriterCommitMessage``)."""


# ---------------------------------------------------------------------------------------
# Executor side
# ---------------------------------------------------------------------------------------
def _task_id(config: SinkConfig) -> str:
    from pyspark import TaskContext

    context = TaskContext.get()
    where = f"{context.partitionId()}-{context.attemptNumber()}" if context else "local"
    return f"{config.name}-spark-{where}-{uuid.uuid4().hex[:8]}"


def write_batches(config: SinkConfig, columns: Mapping[str, str],
                  batches: Iterable[pa.RecordBatch]) -> SparkTaskResult:
    """Run the connector's task pipeline over one Spark partition's input; nothing is committed.

    A batch that needs a table created or evolved gets it here, from this task
    (concurrent tasks' identical changes are idempotent), and is processed again.
    """
    task_id = _task_id(config)
    pipeline = new_pipeline(config, task_id)
    result = SparkTaskResult(task_id=task_id)

    def process_piece(piece: pa.RecordBatch) -> tuple[SchemaNeeds, pa.RecordBatch | None]:
        needs = pipeline.process(piece)
        if needs:
            pipeline.forget_tables(needs.tables)
            return needs, piece
        result.track(piece)
        return needs, None

    for pending in _gathered(batches, columns):
        combined = pa.Table.from_batches(pending).combine_chunks().to_batches()
        for piece in (p for batch in combined for p in split_by_partition(batch)):
            schema_rounds(pipeline.catalog, config, piece, process_piece)
    written = pipeline.close()
    result.data_files, result.records_written, result.changes = (written.data_files, written.records_written,
                                                                 written.changes)
    return result


def _gathered(batches: Iterable[pa.RecordBatch], columns: Mapping[str, str]) -> Iterator[list[pa.RecordBatch]]:
    """Spark's Arrow batches (10k rows by default), conformed and gathered into lists of ~PROCESS_ROWS rows."""
    pending: list[pa.RecordBatch] = []
    pending_rows = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        pending.append(conform(batch, columns))
        pending_rows += batch.num_rows
        if pending_rows >= PROCESS_ROWS:
            yield pending
            pending, pending_rows = [], 0
    if pending:
        yield pending


# ---------------------------------------------------------------------------------------
# Driver side
# ---------------------------------------------------------------------------------------
def commit_messages(config: SinkConfig, messages: Iterable[TaskResult | None], *,
                    batch_id: int | None = None, query_id: str | None = None) -> dict[str, int]:
    """One append per table with all tasks' files and the offsets; returns the new snapshot ids."""
    batch = CommitBatch.of(m for m in messages if m is not None)
    covered = batch.next_offsets
    if not covered:
        return {}
    catalog = load_catalog(config.props)
    extra = {}
    if batch_id is not None:
        extra[SPARK_BATCH_ID] = str(batch_id)
        if query_id:
            extra[SPARK_QUERY_ID] = query_id
    extra.update(_dlq_position(config, catalog, covered))
    tables = []
    for table_name in batch.tables():
        if batch_id is not None and query_id and _already_committed(catalog, config, table_name, query_id, batch_id):
            _delete_files(catalog.load_table(table_name), batch.files.get(table_name, []))
        else:
            tables.append(table_name)
    snapshots = commit_tables(catalog, config, tables, batch.files, covered, extra,
                              valid_through=batch.valid_through(covered), changes=batch.changes)
    _mirror_group_offsets(config, _group_offsets(catalog, config, covered, snapshots))
    return snapshots


def _already_committed(catalog, config: SinkConfig, table_name: str, query_id: str, batch_id: int) -> bool:
    """Whether ``table_name`` already holds this streaming batch (Spark re-runs the last one after a crash)."""
    table = catalog.load_table(table_name)
    branch = config.iceberg.table_config(table_name).commit_branch or "main"
    if last_spark_batch(table, branch, query_id) != batch_id:
        return False
    log.warning("Batch %d of query %s is already in %s (Spark re-ran it): not committing it again",
                batch_id, query_id, table_name)
    return True


def _group_offsets(catalog, config: SinkConfig, covered: dict[TopicPartition, int],
                   snapshots: dict[str, int]) -> dict[TopicPartition, int]:
    """The offsets to mirror to the group: ``covered``, raised to what the committed tables now hold."""
    mirror = dict(covered)
    for table_name in snapshots:
        branch = config.iceberg.table_config(table_name).commit_branch
        table = catalog.load_table(table_name)
        for tp, offset in committed_offsets(table, config.group_id, branch, java_keys(config)).items():
            if tp in mirror:
                mirror[tp] = max(offset, mirror[tp])
    return mirror


def last_spark_batch(table, branch: str, query_id: str) -> int | None:
    """The newest Spark batch id of ``query_id`` recorded in ``table``'s snapshot ancestry."""
    for summary in summaries(table, branch):
        if summary.get(SPARK_QUERY_ID) == query_id and SPARK_BATCH_ID in summary:
            return int(summary[SPARK_BATCH_ID])
    return None


def _dlq_position(config: SinkConfig, catalog, covered: dict[TopicPartition, int]) -> dict[str, str]:
    """The dead letter queue's position for the snapshot summary (see connector/tolerance/dead_letters.py), when the
    sink was told where Kafka is and a DLQ is configured."""
    if "bootstrap.servers" not in config.worker:
        return {}
    from connector.kafka.client_config import consumer_config
    from connector.tolerance.dead_letters import position_properties

    client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
    return position_properties(config, client_conf, catalog, covered)


def _mirror_group_offsets(config: SinkConfig, offsets: dict[TopicPartition, int]) -> None:
    """Mirror to ``connect-<name>`` when the sink was told where Kafka is (the table holds the truth), the
    coordinator's way (:class:`~connector.commit.group_mirror.GroupMirror`). Each Spark commit runs in a
    process of its own, so what one cannot mirror waits for the next batch's commit, which mirrors the
    newer offsets the tables then hold."""
    if "bootstrap.servers" not in config.worker:
        return
    from connector.kafka.client_config import consumer_config

    client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
    GroupMirror(client_conf, config.group_id, timeout=config.offset_flush_timeout_s).mirror(offsets)


def abort_messages(config: SinkConfig, messages: Iterable[TaskResult | None]) -> None:
    """Delete the files written by the tasks that finished (best effort; leftovers are orphans)."""
    finished = [m for m in messages if m is not None and m.data_files]
    if not finished:
        return
    try:
        catalog = load_catalog(config.props)
        for message in finished:
            for table_name, table_files in message.data_files.items():
                _delete_files(catalog.load_table(table_name), table_files)
    except Exception as exc:  # noqa: BLE001 - best effort: an aborted write's leftover files are orphans
        log.warning("Could not delete the files of an aborted write: %s", exc)


def _delete_files(table, data_files: list) -> None:
    for data_file in data_files:
        try:
            table.io.delete(data_file.file_path)
        except Exception as exc:  # noqa: BLE001 - best effort: a file left behind is an orphan
            log.warning("Could not delete %s: %s", data_file.file_path, exc)


def streaming_query_id(options: Mapping[str, str], config: SinkConfig) -> str | None:
    """A streaming query's identity across restarts, for skipping a re-run batch.

    The option ``icefloe.spark.query-id`` if given; else the query id Spark
    keeps in ``<checkpointLocation>/metadata`` (a deleted checkpoint is a new
    query, whose batch ids start again at 0); else the checkpoint path; else
    the query name (stable when ``spark.sql.streaming.checkpointLocation`` is
    set). None when there is nothing stable: then only offsets guard replays.
    """
    lowered = {str(k).lower(): str(v) for k, v in options.items()}
    if lowered.get(QUERY_ID_OPTION):
        return lowered[QUERY_ID_OPTION]
    checkpoint = lowered.get("checkpointlocation", "").rstrip("/")
    if checkpoint:
        found = _checkpoint_query_id(checkpoint, config)
        return found or f"checkpoint:{checkpoint}"
    if lowered.get("queryname"):
        return f"name:{lowered['queryname']}"
    return None


def _checkpoint_query_id(checkpoint: str, config: SinkConfig) -> str | None:
    location = checkpoint + "/metadata"
    try:
        path = local_path(location)  # read as Spark (Hadoop) reads the checkpoint location
        if path is not None:
            with open(path, encoding="utf-8") as handle:
                text = handle.readline()
        else:
            from pyiceberg.io import load_file_io

            from connector.config.catalog_config import catalog_properties, pyiceberg_properties

            io = load_file_io(pyiceberg_properties(catalog_properties(config.props)[1])[0], location)
            with io.new_input(location).open() as stream:
                text = stream.read().decode("utf-8").splitlines()[0]
        return json.loads(text)["id"]
    except Exception as exc:  # noqa: BLE001 - any failure: fall back to the checkpoint path
        log.warning("Could not read the streaming query id from %s (%s); using the checkpoint path", location, exc)
        return None


# ---------------------------------------------------------------------------------------
# The Data Source
# ---------------------------------------------------------------------------------------
class IcebergBatchWriter(DataSourceArrowWriter):
    def __init__(self, config: SinkConfig, columns: dict[str, str]):
        self.config = config
        self.columns = columns

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SparkTaskResult:
        return write_batches(self.config, self.columns, iterator)

    def commit(self, messages) -> None:
        commit_messages(self.config, messages)

    def abort(self, messages) -> None:
        abort_messages(self.config, messages)


class IcebergStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, config: SinkConfig, columns: dict[str, str], options: Mapping[str, str]):
        self.config = config
        self.columns = columns
        self.options = dict(options)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SparkTaskResult:
        return write_batches(self.config, self.columns, iterator)

    def commit(self, messages, batchId: int) -> None:  # noqa: N803 - Spark's name
        query_id = streaming_query_id(self.options, self.config)
        commit_messages(self.config, messages, batch_id=batchId, query_id=query_id)

    def abort(self, messages, batchId: int) -> None:  # noqa: N803
        abort_messages(self.config, messages)


#: Keys of icefloe's own commit cycles (``icefloe run``, the REST worker), which this format does not run.
CYCLE_KEYS = frozenset({"iceberg.control.commit.interval-ms", "iceberg.control.commit.timeout-ms",
                        "icefloe.commit.max-records", "icefloe.driver.max-records",
                        "icefloe.driver.while-spark-starts"})


class IcebergDataSource(DataSource):
    """``df.write.format("icefloe-iceberg")`` / ``df.writeStream.format("icefloe-iceberg")``."""

    def __init__(self, options):
        super().__init__(options)
        props, worker = split_options(options)
        self.config = SinkConfig.parse(props, worker)
        for key in self.config.unused_keys:
            log.warning("icefloe-iceberg: option %s is not a connector setting and is ignored", key)
        for note in self.config.warnings:  # e.g. a Java sink key with no effect, as `icefloe run` warns
            log.warning("icefloe-iceberg: %s", note)
        for key in sorted(CYCLE_KEYS & set(props)):
            log.warning("icefloe-iceberg: option %s has no effect on this format: Spark's trigger decides when "
                        "a micro-batch commits", key)

    @classmethod
    def name(cls) -> str:
        return "icefloe-iceberg"

    def writer(self, schema: StructType, overwrite: bool) -> IcebergBatchWriter:
        columns = self._prepare(schema, overwrite)
        return IcebergBatchWriter(self.config, columns)

    def streamWriter(self, schema: StructType, overwrite: bool) -> IcebergStreamWriter:
        columns = self._prepare(schema, overwrite)
        return IcebergStreamWriter(self.config, columns, dict(self.options))

    def _prepare(self, schema: StructType, overwrite: bool) -> dict[str, str]:
        """Driver-side checks before any task runs: append mode, input columns, a reachable catalog."""
        from connector.data.catalog import load_catalog

        if overwrite:
            raise ConfigException("icefloe-iceberg only appends (as the Kafka Connect sink does); use mode('append')")
        columns = input_columns(schema)
        # Loading the catalog here also initialises a new SQL catalog's tables once, before the
        # tasks load it concurrently (pyiceberg's SqlCatalog races on creating them).
        load_catalog(self.config.props)
        return columns
