"""``icefloe-kafka``: a Kafka source for Spark's Python Data Source API (batch and streaming).

Rows have the raw record schema of :data:`connector.kafka.range_reader.RAW_SCHEMA`
(``topic, partition, offset, timestamp, timestamp_type, key, value, headers``;
``timestamp`` is epoch milliseconds), which is exactly what the
``icefloe-iceberg`` sink takes as input.

Offsets are planned on the driver: the topic-partitions of ``topics`` /
``topics.regex``, where each starts (``startingOffsets``) and ends
(``endingOffsets`` for batch reads; the Fetch high watermark otherwise), cut
into at most ``tasks.max`` Spark partitions of equal record counts (a large
partition's range is split over several Spark partitions). Each Spark
partition reads its ranges on an executor with confluent-kafka, assigning
partitions directly (no consumer group is joined), and yields Arrow batches.

Spark lower-cases option keys; Kafka's keys are lower-case anyway, and the
Spark-style options (``startingOffsets``, ...) are matched case-insensitively.
See docs/spark-plugin.md for the options.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence, cast

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    ByteType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

try:  # pyspark >= 4.1
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
except ImportError:  # pragma: no cover - older pyspark: Trigger.AvailableNow falls back to one batch
    SupportsTriggerAvailableNow = object  # type: ignore[assignment,misc]

from connector.api.errors import ConfigException
from connector.api.record import TopicPartition
from connector.kafka.offsets import MIN_SPLIT_RECORDS, OffsetRange, earliest_offsets, end_offsets, plan_ranges

log = logging.getLogger(__name__)


#: Spark's own spelling of "log start" / "log end" inside JSON offsets.
EARLIEST, LATEST = -2, -1

READ_BATCH_SIZE = 50_000
#: A Kafka partition's range is cut into Spark partitions of at least this many records (``minSplitRecords``).

#: :data:`RAW_SCHEMA` as a Spark schema, nullability included (batches must match it exactly).
SPARK_RAW_SCHEMA = StructType([
    StructField("topic", StringType(), False),
    StructField("partition", IntegerType(), False),
    StructField("offset", LongType(), False),
    StructField("timestamp", LongType(), True),
    StructField("timestamp_type", ByteType(), False),
    StructField("key", BinaryType(), True),
    StructField("value", BinaryType(), True),
    StructField("headers", ArrayType(StructType([
        StructField("key", StringType(), False),
        StructField("value", BinaryType(), True),
    ]), containsNull=False), False),
])

# Spark's Kafka source names for the same settings, accepted as aliases.
_ALIASES = {"subscribe": "topics", "subscribepattern": "topics.regex"}


@dataclass(frozen=True)
class KafkaOptions:
    """The source's options, parsed once on the driver."""

    name: str
    topics: tuple[str, ...]
    topics_regex: str | None
    client_conf: dict
    tasks_max: int | None
    min_split_records: int
    starting: str
    ending: str
    max_offsets_per_trigger: int | None

    @staticmethod
    def parse(options: Mapping[str, str]) -> "KafkaOptions":
        from connector.kafka.client_config import consumer_config

        opts = {str(k).lower(): str(v) for k, v in options.items()}
        for alias, key in _ALIASES.items():
            if alias in opts:
                opts.setdefault(key, opts.pop(alias))
        # Spark's Kafka source spells client settings kafka.<key>: read them as consumer.<key>.
        client_keys = {k: v for k, v in opts.items() if not k.startswith("kafka.")}
        client_keys.update({"consumer." + k[len("kafka."):]: v for k, v in opts.items() if k.startswith("kafka.")})
        name = opts.get("name", "icefloe-kafka")
        topics = tuple(t.strip() for t in opts.get("topics", "").split(",") if t.strip())
        regex = opts.get("topics.regex", "").strip() or None
        if topics and regex:
            raise ConfigException("topics and topics.regex are mutually exclusive options, but both are set.")
        if not topics and not regex:
            raise ConfigException("icefloe-kafka needs the option topics (comma-separated) or topics.regex")
        return KafkaOptions(
            name=name,
            topics=topics,
            topics_regex=regex,
            client_conf=consumer_config(client_keys, client_keys, connector_name=name),
            tasks_max=_positive_int(opts, "tasks.max"),
            min_split_records=_positive_int(opts, "minsplitrecords") or MIN_SPLIT_RECORDS,
            starting=opts.get("startingoffsets", "earliest").strip(),
            ending=opts.get("endingoffsets", "latest").strip(),
            max_offsets_per_trigger=_positive_int(opts, "maxoffsetspertrigger"),
        )

    # --- driver-side queries ----------------------------------------------------------

    def partitions(self) -> list[TopicPartition]:
        from connector.kafka.topics import resolve_partitions

        return resolve_partitions(self.client_conf, list(self.topics), self.topics_regex)

    def resolve(self, spec: str, partitions: Sequence[TopicPartition], option: str) -> dict[TopicPartition, int]:
        """Offsets for ``earliest`` / ``latest`` / JSON ``{"topic": {"0": 12}}`` (-2 earliest, -1 latest)."""
        lowered = spec.lower()
        if lowered == "earliest":
            return earliest_offsets(self.client_conf, partitions)
        if lowered == "latest":
            return end_offsets(self.client_conf, partitions)
        given = parse_offsets_json(spec, option)
        unknown = sorted(set(given) - set(partitions))
        if unknown:
            raise ConfigException(option, spec, "names partitions that are not subscribed: "
                                  + ", ".join(f"{t}[{p}]" for t, p in unknown))
        # Partitions the JSON leaves out start at the log start and end at the log end, as in Spark.
        default = EARLIEST if option == "startingOffsets" else LATEST
        wanted = {tp: given.get(tp, default) for tp in partitions}
        earliest_needed = [tp for tp, offset in wanted.items() if offset == EARLIEST]
        # Explicit end offsets are checked against the log end (reading would wait for them otherwise).
        latest_needed = [tp for tp, offset in wanted.items() if offset == LATEST or option == "endingOffsets"]
        earliest = earliest_offsets(self.client_conf, earliest_needed) if earliest_needed else {}
        latest = end_offsets(self.client_conf, latest_needed) if latest_needed else {}
        beyond = [f"{t}[{p}]: {o} > {latest[(t, p)]}" for (t, p), o in wanted.items()
                  if option == "endingOffsets" and o > latest[(t, p)]]
        if beyond:
            raise ConfigException(option, spec, "is beyond the end of the partition(s): " + ", ".join(beyond))
        return {tp: earliest[tp] if o == EARLIEST else latest[tp] if o == LATEST else o for tp, o in wanted.items()}

    def plan(self, start: Mapping[TopicPartition, int],
             end: Mapping[TopicPartition, int]) -> list["KafkaInputPartition"]:
        """At most ``tasks.max`` Spark partitions (default: one per topic-partition read).

        Ranges are dealt out evenly, cutting a partition's range where a Spark
        partition is full, as long as the pieces hold ``minSplitRecords``;
        smaller reads keep each Kafka partition's range whole.
        """
        end = {tp: offset for tp, offset in end.items() if tp in start}
        nonempty = sum(1 for tp in end if end[tp] > start[tp])
        if not nonempty:
            return []
        groups = plan_ranges(start, end, max_tasks=self.tasks_max or nonempty, split_large=True,
                             min_split_records=self.min_split_records)
        return [KafkaInputPartition(tuple(group), self.client_conf) for group in groups]


def _positive_int(opts: Mapping[str, str], key: str) -> int | None:
    if key not in opts or not str(opts[key]).strip():
        return None
    try:
        value = int(opts[key])
    except ValueError:
        raise ConfigException(key, opts[key], "must be an integer") from None
    if value < 1:
        raise ConfigException(key, opts[key], "must be at least 1")
    return value


def parse_offsets_json(text: str, option: str) -> dict[TopicPartition, int]:
    """``{"topic": {"0": 12, "1": -2}}`` → ``{("topic", 0): 12, ("topic", 1): -2}``."""
    try:
        document = json.loads(text)
        offsets = {(str(topic), int(partition)): int(offset)
                   for topic, parts in document.items() for partition, offset in parts.items()}
    except (ValueError, AttributeError, TypeError):
        raise ConfigException(option, text, 'must be earliest, latest or JSON like {"topic":{"0":12}}') from None
    bad = [f"{t}[{p}]={o}" for (t, p), o in offsets.items() if o < LATEST - 1]
    if bad:
        raise ConfigException(option, text, "offsets must be >= 0, or -2 (earliest) / -1 (latest): " + ", ".join(bad))
    return offsets


def encode_offsets(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """The JSON-able streaming offset: ``{"topic": {"0": 12}}``, sorted."""
    encoded: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        encoded.setdefault(topic, {})[str(partition)] = int(offset)
    return encoded


def decode_offsets(encoded: Mapping[str, Mapping[str, int]] | None) -> dict[TopicPartition, int]:
    return {(topic, int(p)): int(o) for topic, parts in (encoded or {}).items() for p, o in parts.items()}


class KafkaInputPartition(InputPartition):
    """One Spark partition: offset ranges to read, and the librdkafka config to read them with."""

    def __init__(self, ranges: tuple[OffsetRange, ...], client_conf: dict):
        super().__init__([(r.topic, r.partition, r.start, r.end) for r in ranges])
        self.ranges = ranges
        self.client_conf = client_conf

    def __repr__(self) -> str:
        return f"KafkaInputPartition({', '.join(f'{r.topic}[{r.partition}]:{r.start}-{r.end}' for r in self.ranges)})"


def read_partition(partition: KafkaInputPartition) -> Iterator:
    """Executor side: Arrow batches of :data:`RAW_SCHEMA`, range after range, through one consumer."""
    from connector.kafka.range_reader import RangeReader

    with RangeReader(partition.client_conf, batch_size=READ_BATCH_SIZE) as reader:
        for rng in partition.ranges:
            for batch in reader.read(rng):
                if batch.num_rows:
                    yield batch


class KafkaBatchReader(DataSourceReader):
    def __init__(self, options: KafkaOptions):
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        tps = self.options.partitions()
        start = self.options.resolve(self.options.starting, tps, "startingOffsets")
        end = self.options.resolve(self.options.ending, tps, "endingOffsets")
        for tp in tps:
            if start[tp] > end[tp]:
                raise ConfigException(f"{tp[0]}[{tp[1]}]: startingOffsets {start[tp]} is beyond "
                                      f"endingOffsets {end[tp]}")
        planned = self.options.plan(start, end)
        log.info("icefloe-kafka batch read: %d Spark partition(s) over %d topic-partition(s)", len(planned), len(tps))
        # Spark needs at least one partition; an empty one reads nothing.
        return planned or [KafkaInputPartition((), self.options.client_conf)]

    def read(self, partition: InputPartition):
        # Spark hands back the partitions that partitions() planned: KafkaInputPartitions.
        return read_partition(cast(KafkaInputPartition, partition))


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches between Kafka offsets. Spark's checkpoint keeps the offsets of each batch.

    The reader lives in one long-running Python process on the driver for the
    whole query, so the Trigger.AvailableNow target survives between calls.
    """

    def __init__(self, options: KafkaOptions):
        self.options = options
        self._target: dict[TopicPartition, int] | None = None
        self._latest: dict[TopicPartition, int] | None = None

    def initialOffset(self) -> dict:
        tps = self.options.partitions()
        return encode_offsets(self.options.resolve(self.options.starting, tps, "startingOffsets"))

    def prepareForTriggerAvailableNow(self) -> None:
        tps = self.options.partitions()
        self._target = end_offsets(self.options.client_conf, tps)
        log.info("icefloe-kafka: Trigger.AvailableNow reads up to %s", encode_offsets(self._target))

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadMaxRows(limit) if limit else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = decode_offsets(start)
        if self._target is not None:
            available = dict(self._target)
        else:
            available = end_offsets(self.options.client_conf, self.options.partitions())
        self._latest = available
        end = dict(begin)
        for tp, offset in available.items():
            if tp in begin:
                end[tp] = max(begin[tp], offset)
            elif offset > 0:  # a partition added since the start: read it from its log start
                end[tp] = offset
        if isinstance(limit, ReadMaxRows):
            end = _limit_rows(begin, end, limit.max_rows, self._log_start)
        return encode_offsets(end)

    def _log_start(self, tps: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        return earliest_offsets(self.options.client_conf, tps)

    def reportLatestOffset(self) -> dict | None:
        return encode_offsets(self._latest) if self._latest is not None else None

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin, finish = decode_offsets(start), decode_offsets(end)
        added = [tp for tp in finish if tp not in begin]
        if added:
            begin.update(self._log_start(added))
        return self.options.plan(begin, finish)

    def read(self, partition: InputPartition):
        # Spark hands back the partitions that partitions() planned: KafkaInputPartitions.
        return read_partition(cast(KafkaInputPartition, partition))

    def commit(self, end: dict) -> None:
        """Nothing to do: the sink records progress in the table, Spark in its checkpoint."""


def _limit_rows(begin: dict[TopicPartition, int], end: dict[TopicPartition, int], max_rows: int,
                log_start) -> dict[TopicPartition, int]:
    """Cut ``end`` so at most ``max_rows`` offsets are read, shared fairly (water-filling) over partitions."""
    added = [tp for tp in end if tp not in begin]
    starts = {**begin, **(log_start(added) if added else {})}
    available = {tp: max(0, end[tp] - starts[tp]) for tp in end}
    if sum(available.values()) <= max_rows:
        return end
    limited = dict(end)
    remaining = max_rows
    ordered = sorted(available, key=lambda tp: (available[tp], tp))
    for index, tp in enumerate(ordered):
        take = min(available[tp], remaining // (len(ordered) - index))
        remaining -= take
        limited[tp] = starts[tp] + take
    for tp in added:  # a new partition that gets nothing this time stays out of the offset
        if limited[tp] == starts[tp]:
            del limited[tp]
    return limited


class KafkaDataSource(DataSource):
    """``spark.read.format("icefloe-kafka")`` / ``spark.readStream.format("icefloe-kafka")``."""

    def __init__(self, options):
        super().__init__(options)
        self.parsed = KafkaOptions.parse(options)

    @classmethod
    def name(cls) -> str:
        return "icefloe-kafka"

    def schema(self) -> StructType:
        return SPARK_RAW_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        _require_raw_schema(schema)
        return KafkaBatchReader(self.parsed)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        _require_raw_schema(schema)
        return KafkaStreamReader(self.parsed)


def _require_raw_schema(schema: StructType) -> None:
    if schema != SPARK_RAW_SCHEMA:
        raise ConfigException(
            f"icefloe-kafka has a fixed schema ({SPARK_RAW_SCHEMA.simpleString()}); "
            f"do not pass .schema(...) (got {schema.simpleString()})"
        )
