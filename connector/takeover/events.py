"""The Java Iceberg sinks' control-topic events: Iceberg's Avro event encoding, read and written.

Every event on the control topic is one ``Event`` envelope (id, type,
timestamp, group id, payload) encoded by Iceberg's ``AvroEncoderUtil``:

    0xC2 0x01                  magic
    u2 length + bytes          the writer's Avro schema as JSON, Java ``DataOutputStream.writeUTF``
                               (modified UTF-8)
    Avro binary datum          the event, in that schema

The schemas come from Iceberg types (``AvroSchemaUtil``), so each field carries
its Iceberg ``field-id``; icefloe reads fields by id, as the Java classes do,
and ignores ids it does not know (events of a newer format).

Avro Java writes a named type that has no namespace (``uuid_fixed``, the
records ``k<id>_v<id>`` of int-keyed maps) as ``"namespace": ""`` where it is
defined inside a namespaced record, and every later reference to it by its bare
name — which, by the Avro specification, means the *enclosing* namespace.
Java's parser resolves such a name by trying the enclosing namespace and then
no namespace; :func:`resolve_names` does the same and rewrites every name fully
qualified, so fastavro reads the schema. Logical types are dropped on read:
uuids arrive as 16 bytes, timestamps as microseconds.

Payload types (``PayloadType``): 0 StartCommit, 1 DataWritten, 2 DataComplete,
3 CommitToTable, 4 CommitComplete. The Tabular sink's legacy format (before
v0.6.17) is not read (:func:`connector.takeover.replay.read_events` says what
happens to such records).
"""

from __future__ import annotations

import io
import json
import struct
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable

import fastavro

from connector.api.errors import ConnectException

MAGIC = b"\xc2\x01"
PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NULL_NAMESPACE = "icefloe_null_namespace"  # stands for Avro's null namespace once names are qualified

START_COMMIT, DATA_WRITTEN, DATA_COMPLETE, COMMIT_TO_TABLE, COMMIT_COMPLETE = range(5)
EVENTS_NAMESPACE = "org.apache.iceberg.connect.events"


class EventFormatError(ConnectException):
    """A control-topic record that is not an Iceberg event."""


# --- the model -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TableReference:
    catalog: str
    namespace: tuple[str, ...]
    name: str
    uuid: uuid.UUID | None = None

    @property
    def identifier(self) -> str:
        return ".".join((*self.namespace, self.name))


@dataclass(frozen=True)
class TopicPartitionOffset:
    topic: str
    partition: int
    offset: int | None  # next offset to read; None: the worker had no records of it in this commit
    timestamp: int | None = None  # micros


@dataclass
class DataFileInfo:
    """A data or delete file as the event carries it (``DataFile.getType``), by field name."""

    path: str
    file_format: str
    record_count: int
    file_size_in_bytes: int
    content: int = 0
    partition: dict[str, Any] = field(default_factory=dict)
    spec_id: int | None = None
    fields: dict[str, Any] = field(default_factory=dict)  # every field of the struct, as decoded


@dataclass
class StartCommit:
    commit_id: uuid.UUID


@dataclass
class DataWritten:
    commit_id: uuid.UUID
    table: TableReference
    data_files: list[DataFileInfo]
    delete_files: list[DataFileInfo]


@dataclass
class DataComplete:
    commit_id: uuid.UUID
    assignments: list[TopicPartitionOffset]


@dataclass
class CommitToTable:
    commit_id: uuid.UUID
    table: TableReference
    snapshot_id: int | None
    valid_through_ts: int | None


@dataclass
class CommitComplete:
    commit_id: uuid.UUID
    valid_through_ts: int | None


Payload = StartCommit | DataWritten | DataComplete | CommitToTable | CommitComplete


@dataclass
class Event:
    id: uuid.UUID
    type: int
    timestamp: int  # micros (Iceberg timestamptz)
    group_id: str
    payload: Payload | None  # None: a payload type this version does not know


# --- framing ---------------------------------------------------------------------------------


def java_write_utf(text: str) -> bytes:
    """``DataOutputStream.writeUTF``: u2 length, then modified UTF-8 (NUL as C0 80, surrogate pairs)."""
    out = bytearray()
    for unit in struct.unpack(f">{len(text.encode('utf-16-be', 'surrogatepass')) // 2}H",
                              text.encode("utf-16-be", "surrogatepass")):
        if 0 < unit < 0x80:
            out.append(unit)
        elif unit < 0x800:
            out += bytes((0xC0 | unit >> 6, 0x80 | unit & 0x3F))
        else:
            out += bytes((0xE0 | unit >> 12, 0x80 | unit >> 6 & 0x3F, 0x80 | unit & 0x3F))
    if len(out) > 0xFFFF:
        raise EventFormatError("schema too long for writeUTF")
    return struct.pack(">H", len(out)) + bytes(out)


def java_read_utf(data: bytes, at: int) -> tuple[str, int]:
    """``DataInputStream.readUTF`` at ``at``: the text and the position after it."""
    (length,) = struct.unpack_from(">H", data, at)
    raw = data[at + 2:at + 2 + length]
    if len(raw) != length:
        raise EventFormatError("truncated schema")
    units: list[int] = []
    i = 0
    while i < len(raw):
        byte = raw[i]
        if byte < 0x80:
            units.append(byte)
            i += 1
        elif byte >> 5 == 0b110:
            units.append((byte & 0x1F) << 6 | raw[i + 1] & 0x3F)
            i += 2
        else:
            units.append((byte & 0x0F) << 12 | (raw[i + 1] & 0x3F) << 6 | raw[i + 2] & 0x3F)
            i += 3
    text = struct.pack(f">{len(units)}H", *units).decode("utf-16-be", "surrogatepass")
    return text, at + 2 + length


# --- Java's name resolution ----------------------------------------------------------------------


def resolve_names(schema: Any) -> Any:
    """``schema`` (parsed JSON) with every named type fully qualified as Avro Java resolves it.

    Definitions get their full name (the null namespace spelled :data:`NULL_NAMESPACE`);
    a reference by a bare name means the enclosing namespace's type if there is
    one, else the type of that name in no namespace. Logical types are dropped.
    """
    defined: set[str] = set()

    def full(name: str, namespace: str) -> str:
        return f"{namespace or NULL_NAMESPACE}.{name}"

    def reference(name: str, enclosing: str) -> str:
        if name in PRIMITIVES:
            return name
        if "." in name:
            if name in defined:
                return name
            raise EventFormatError(f"Unknown Avro type {name!r} in an event schema")
        for candidate in (full(name, enclosing), full(name, "")):
            if candidate in defined:
                return candidate
        raise EventFormatError(f"Unknown Avro type {name!r} in an event schema")

    def walk(node: Any, enclosing: str) -> Any:
        if isinstance(node, str):
            return reference(node, enclosing)
        if isinstance(node, list):
            return [walk(branch, enclosing) for branch in node]
        if not isinstance(node, dict):
            raise EventFormatError(f"Not an Avro schema: {node!r}")
        kind = node.get("type")
        out = {k: v for k, v in node.items() if k not in ("logicalType", "namespace")}
        if kind in ("record", "error", "enum", "fixed"):
            name = node["name"]
            if "." in name:
                namespace, _, short = name.rpartition(".")
            else:
                namespace, short = node.get("namespace", enclosing) or "", name
            qualified = full(short, namespace)
            defined.add(qualified)
            out["name"] = qualified
            if kind in ("record", "error"):
                out["fields"] = [{**f, "type": walk(f["type"], namespace)} for f in node["fields"]]
            return out
        if kind == "array":
            out["items"] = walk(node["items"], enclosing)
            return out
        if kind == "map":
            out["values"] = walk(node["values"], enclosing)
            return out
        if isinstance(kind, (dict, list)):
            return walk(kind, enclosing)
        if isinstance(kind, str) and kind in PRIMITIVES:
            return kind if len(out) == 1 else out
        if isinstance(kind, str):
            return reference(kind, enclosing)
        raise EventFormatError(f"Not an Avro schema: {node!r}")

    return walk(schema, "")


@lru_cache(maxsize=64)
def _parsed(schema_text: str) -> tuple[Any, Any]:
    """(the resolved schema as parsed JSON, fastavro's parsed schema) of one writer schema."""
    try:
        document = json.loads(schema_text)
    except json.JSONDecodeError as exc:
        raise EventFormatError(f"Event schema is not JSON: {exc}") from None
    resolved = resolve_names(document)
    return resolved, fastavro.parse_schema(resolved, _write_hint=False)


# --- decoding ------------------------------------------------------------------------------------


def decode_event(data: bytes) -> Event:
    """One control-topic record value → :class:`Event`; raises :class:`EventFormatError`."""
    if data[:2] != MAGIC:
        raise EventFormatError("not an Iceberg Avro event (magic bytes C2 01 missing)")
    try:
        schema_text, at = java_read_utf(data, 2)
        resolved, parsed = _parsed(schema_text)
        datum = fastavro.schemaless_reader(io.BytesIO(data[at:]), parsed, None)
    except EventFormatError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, EOFError, struct.error,
            fastavro.schema.SchemaParseException) as exc:  # a malformed payload
        raise EventFormatError(f"Cannot decode an Iceberg event: {exc}") from exc
    if not isinstance(datum, dict):
        raise EventFormatError("an Iceberg event is a record")
    envelope = _by_id(resolved, datum)
    kind = envelope[10_501]
    payload_schema = _field_schema(resolved, 10_504)
    payload = _payload(kind, _by_id(payload_schema, envelope[10_504]), payload_schema)
    return Event(_uuid(envelope[10_500]), kind, envelope[10_502], str(envelope[10_503]), payload)


def _field_schema(record: dict, field_id: int) -> Any:
    for f in record["fields"]:
        if f.get("field-id") == field_id:
            return _non_null(f["type"])
    raise EventFormatError(f"Event schema has no field {field_id}")


def _non_null(schema: Any) -> Any:
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        return branches[0] if len(branches) == 1 else schema
    return schema


def _by_id(record: Any, datum: dict | None) -> dict[int, Any]:
    if datum is None:
        return {}
    return {f["field-id"]: datum.get(f["name"]) for f in record["fields"] if "field-id" in f}


def _uuid(value: Any) -> uuid.UUID:
    if isinstance(value, uuid.UUID):
        return value
    if isinstance(value, (bytes, bytearray)) and len(value) == 16:
        return uuid.UUID(bytes=bytes(value))
    return uuid.UUID(str(value))


def _table_reference(fields: dict[int, Any]) -> TableReference:
    return TableReference(str(fields[10_600]), tuple(fields.get(10_601) or ()), str(fields[10_603]),
                          _uuid(fields[10_604]) if fields.get(10_604) is not None else None)


def _payload(kind: int, fields: dict[int, Any], schema: Any) -> Payload | None:
    if kind == START_COMMIT:
        return StartCommit(_uuid(fields[10_200]))
    if kind == DATA_WRITTEN:
        table = _table_reference(_by_id(_field_schema(schema, 10_301), fields[10_301]))
        return DataWritten(_uuid(fields[10_300]), table, [_data_file(f) for f in fields.get(10_302) or []],
                           [_data_file(f) for f in fields.get(10_304) or []])
    if kind == DATA_COMPLETE:
        element = _non_null(_field_schema(schema, 10_101)["items"])
        assignments = [_by_id(element, a) for a in fields.get(10_101) or []]
        return DataComplete(_uuid(fields[10_100]), [
            TopicPartitionOffset(str(a[10_700]), int(a[10_701]), a.get(10_702), a.get(10_703))
            for a in assignments])
    if kind == COMMIT_TO_TABLE:
        table = _table_reference(_by_id(_field_schema(schema, 10_401), fields[10_401]))
        return CommitToTable(_uuid(fields[10_400]), table, fields.get(10_402), fields.get(10_403))
    if kind == COMMIT_COMPLETE:
        return CommitComplete(_uuid(fields[10_000]), fields.get(10_001))
    return None


def _data_file(datum: dict) -> DataFileInfo:
    return DataFileInfo(path=datum["file_path"], file_format=datum["file_format"],
                        record_count=datum["record_count"], file_size_in_bytes=datum["file_size_in_bytes"],
                        content=datum.get("content") or 0, partition=dict(datum.get("partition") or {}),
                        spec_id=datum.get("spec_id"), fields=dict(datum))


# --- encoding (as the Java sink writes; used to build control topics in tests and tools) ----------


def encode_event(event: Event, *, partition_fields: Iterable[tuple[int, str, str]] = ()) -> bytes:
    """``event`` in the Java sink's encoding, with the schema Avro Java would write for it.

    ``partition_fields``: the DataWritten files' partition struct, as (field id, name, Avro primitive).
    """
    schema = JavaSchema().envelope(event, list(partition_fields))
    text = json.dumps(schema, separators=(",", ":"))
    _, parsed = _parsed(text)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, _datum(event))
    return MAGIC + java_write_utf(text) + out.getvalue()


class JavaSchema:
    """Builds event schemas shaped as Iceberg's ``AvroSchemaUtil`` and Avro Java's ``toString`` write them:
    a named type's definition once (``"namespace": ""`` for a null namespace inside a namespaced
    record), then references by the name relative to the enclosing namespace."""

    def __init__(self) -> None:
        self.written: set[str] = set()

    def named(self, fullname: str, enclosing: str, definition: dict) -> Any:
        namespace, _, name = fullname.rpartition(".")
        if fullname in self.written:
            return name if namespace in ("", enclosing) else fullname
        self.written.add(fullname)
        head: dict[str, Any] = {"type": definition.pop("type"), "name": name}
        if namespace != enclosing:
            head["namespace"] = namespace
        return {**head, **definition}

    def uuid(self, enclosing: str) -> Any:
        return self.named("uuid_fixed", enclosing, {"type": "fixed", "size": 16, "logicalType": "uuid"})

    @staticmethod
    def optional(schema: Any) -> Any:
        return ["null", schema]

    @staticmethod
    def field(field_id: int, name: str, schema: Any, optional: bool = False) -> dict:
        out = {"name": name, "type": ["null", schema] if optional else schema}
        if optional:
            out["default"] = None
        out["field-id"] = field_id
        return out

    def record(self, fullname: str, enclosing: str, fields: list) -> Any:
        return self.named(fullname, enclosing, {"type": "record", "fields": fields})

    def int_map(self, key_id: int, value_id: int, value: Any, enclosing: str) -> Any:
        element = self.record(f"k{key_id}_v{value_id}", enclosing, [
            self.field(key_id, "key", "int"), self.field(value_id, "value", value)])
        return {"type": "array", "items": element, "logicalType": "map"}

    def table_reference(self, field_id: int, enclosing: str) -> Any:
        ns = EVENTS_NAMESPACE
        return self.record(f"{ns}.TableReference", enclosing, [
            self.field(10_600, "catalog", "string"),
            self.field(10_601, "namespace", {"type": "array", "items": "string", "element-id": 10_602}),
            self.field(10_603, "name", "string"),
            self.field(10_604, "table_uuid", self.uuid(ns), optional=True)])

    def data_file(self, fullname: str, enclosing: str, partition_fields: list[tuple[int, str, str]]) -> Any:
        ns = fullname.rpartition(".")[0]
        partition = self.record("org.apache.iceberg.PartitionData", ns, [
            self.field(fid, name, kind, optional=True) for fid, name, kind in partition_fields])
        long_list = {"type": "array", "items": "long", "element-id": 133}
        return self.record(fullname, enclosing, [
            self.field(134, "content", "int", optional=True),
            self.field(100, "file_path", "string"),
            self.field(101, "file_format", "string"),
            self.field(141, "spec_id", "int", optional=True),
            self.field(102, "partition", partition),
            self.field(103, "record_count", "long"),
            self.field(104, "file_size_in_bytes", "long"),
            self.field(108, "column_sizes", self.int_map(117, 118, "long", ns), optional=True),
            self.field(109, "value_counts", self.int_map(119, 120, "long", ns), optional=True),
            self.field(110, "null_value_counts", self.int_map(121, 122, "long", ns), optional=True),
            self.field(137, "nan_value_counts", self.int_map(138, 139, "long", ns), optional=True),
            self.field(125, "lower_bounds", self.int_map(126, 127, "bytes", ns), optional=True),
            self.field(128, "upper_bounds", self.int_map(129, 130, "bytes", ns), optional=True),
            self.field(131, "key_metadata", "bytes", optional=True),
            self.field(132, "split_offsets", long_list, optional=True),
            self.field(135, "equality_ids", {"type": "array", "items": "int", "element-id": 136}, optional=True),
            self.field(140, "sort_order_id", "int", optional=True)])

    def tpo(self, enclosing: str) -> Any:
        return self.record(f"{EVENTS_NAMESPACE}.TopicPartitionOffset", enclosing, [
            self.field(10_700, "topic", "string"),
            self.field(10_701, "partition", "int"),
            self.field(10_702, "offset", "long", optional=True),
            self.field(10_703, "timestamp", {"type": "long", "logicalType": "timestamp-micros",
                                             "adjust-to-utc": True}, optional=True)])

    def payload(self, event: Event, partition_fields: list[tuple[int, str, str]]) -> Any:
        ns = EVENTS_NAMESPACE
        timestamp = {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True}
        p = event.payload
        if isinstance(p, StartCommit):
            return self.record(f"{ns}.StartCommit", ns, [self.field(10_200, "commit_id", self.uuid(ns))])
        if isinstance(p, DataWritten):
            files = {"type": "array", "items": self.data_file("org.apache.iceberg.GenericDataFile", ns,
                                                              partition_fields), "element-id": 10_303}
            deletes = {"type": "array", "items": self.data_file("org.apache.iceberg.GenericDeleteFile", ns,
                                                                partition_fields), "element-id": 10_305}
            return self.record(f"{ns}.DataWritten", ns, [
                self.field(10_300, "commit_id", self.uuid(ns)),
                self.field(10_301, "table_reference", self.table_reference(10_301, ns)),
                self.field(10_302, "data_files", files, optional=True),
                self.field(10_304, "delete_files", deletes, optional=True)])
        if isinstance(p, DataComplete):
            return self.record(f"{ns}.DataComplete", ns, [
                self.field(10_100, "commit_id", self.uuid(ns)),
                self.field(10_101, "assignments", {"type": "array", "items": self.tpo(ns), "element-id": 10_102},
                           optional=True)])
        if isinstance(p, CommitToTable):
            return self.record(f"{ns}.CommitToTable", ns, [
                self.field(10_400, "commit_id", self.uuid(ns)),
                self.field(10_401, "table_reference", self.table_reference(10_401, ns)),
                self.field(10_402, "snapshot_id", "long", optional=True),
                self.field(10_403, "valid_through_ts", timestamp, optional=True)])
        if isinstance(p, CommitComplete):
            return self.record(f"{ns}.CommitComplete", ns, [
                self.field(10_000, "commit_id", self.uuid(ns)),
                self.field(10_001, "valid_through_ts", timestamp, optional=True)])
        raise EventFormatError(f"Cannot encode payload {p!r}")

    def envelope(self, event: Event, partition_fields: list[tuple[int, str, str]]) -> Any:
        ns = EVENTS_NAMESPACE
        fields = [
            self.field(10_500, "id", self.uuid(ns)),
            self.field(10_501, "type", "int"),
            self.field(10_502, "timestamp", {"type": "long", "logicalType": "timestamp-micros",
                                             "adjust-to-utc": True}),
            self.field(10_503, "group_id", "string"),
        ]
        fields.append(self.field(10_504, "payload", self.payload(event, partition_fields)))
        return self.record(f"{ns}.Event", "", fields)


def _datum(event: Event) -> dict:
    p = event.payload
    payload: dict[str, Any]
    if isinstance(p, StartCommit):
        payload = {"commit_id": p.commit_id.bytes}
    elif isinstance(p, DataWritten):
        payload = {"commit_id": p.commit_id.bytes, "table_reference": _table_datum(p.table),
                   "data_files": [_file_datum(f) for f in p.data_files],
                   "delete_files": [_file_datum(f) for f in p.delete_files] or None}
    elif isinstance(p, DataComplete):
        payload = {"commit_id": p.commit_id.bytes, "assignments": [
            {"topic": a.topic, "partition": a.partition, "offset": a.offset, "timestamp": a.timestamp}
            for a in p.assignments]}
    elif isinstance(p, CommitToTable):
        payload = {"commit_id": p.commit_id.bytes, "table_reference": _table_datum(p.table),
                   "snapshot_id": p.snapshot_id, "valid_through_ts": p.valid_through_ts}
    elif isinstance(p, CommitComplete):
        payload = {"commit_id": p.commit_id.bytes, "valid_through_ts": p.valid_through_ts}
    else:
        raise EventFormatError(f"Cannot encode payload {p!r}")
    return {"id": event.id.bytes, "type": event.type, "timestamp": event.timestamp, "group_id": event.group_id,
            "payload": payload}


def _table_datum(table: TableReference) -> dict:
    return {"catalog": table.catalog, "namespace": list(table.namespace), "name": table.name,
            "table_uuid": table.uuid.bytes if table.uuid else None}


def _file_datum(info: DataFileInfo) -> dict:
    datum = dict(info.fields)
    datum.update({"content": info.content, "file_path": info.path, "file_format": info.file_format,
                  "spec_id": info.spec_id, "partition": dict(info.partition), "record_count": info.record_count,
                  "file_size_in_bytes": info.file_size_in_bytes})
    return datum


def payload_type(payload: Payload) -> int:
    return {StartCommit: START_COMMIT, DataWritten: DATA_WRITTEN, DataComplete: DATA_COMPLETE,
            CommitToTable: COMMIT_TO_TABLE, CommitComplete: COMMIT_COMPLETE}[type(payload)]
