"""Avro schemas and data <-> Connect schemas and values, as Confluent's ``AvroData``.

Mapping (Avro -> Connect; the reverse direction produces what Confluent's
``AvroData.fromConnectSchema`` produces, so the schemas it registers round-trip):

=========================================== ================================================
boolean / int / long / float / double       BOOLEAN / INT32 / INT64 / FLOAT32 / FLOAT64
string                                      STRING
int + ``connect.type`` int8 / int16         INT8 / INT16
int + ``logicalType`` date / time-millis    Date / Time
long + ``logicalType`` timestamp-millis     Timestamp (other long logical types stay INT64)
bytes / fixed + ``logicalType`` decimal     Decimal(scale, default 0); ``connect.decimal.precision``
                                            parameter when the precision is not 64
bytes / fixed                               BYTES (fixed: parameter ``connect.fixed.size``,
                                            named after the fixed)
enum                                        STRING, parameters ``io.confluent.connect.avro.Enum``
                                            = full name and ``...Enum.<symbol>`` = symbol
array                                       ARRAY; an array of ``MapEntry`` records (key, value)
                                            becomes a MAP with non-string keys
map                                         MAP(STRING, values)
record                                      STRUCT named after the record's full name
``[null, T]`` / ``[T, null]``               T, optional (a default on such a field is dropped)
``[T]``                                     T (``flatten.singleton.unions``, default true)
other unions                                STRUCT ``io.confluent.connect.avro.Union`` with one
                                            optional field per branch, named ``int``, ``string``,
                                            the record's short name (full name with
                                            ``enhanced.avro.schema.support``) or
                                            ``connect_union_field_<i>``
                                            (``generalized.sum.type.support``); a null branch makes
                                            it optional
=========================================== ================================================

Schema properties honoured: ``connect.name``, ``connect.version`` (else the
registry version of the top-level schema), ``connect.doc``,
``connect.parameters``, ``connect.default``, and ``avro*`` properties copied
into parameters. With ``connect.meta.data`` (default true) record/field docs and
enum docs/defaults become ``io.confluent.connect.avro.*`` parameters and field
defaults are flagged with ``io.confluent.connect.avro.field.default``.

Datums are the values fastavro reads with the *compiled* schema of
:func:`compile_schema`: the schema with logical types stripped (so raw ints,
longs and bytes arrive) and, for every union that maps to a Connect Union
struct, each branch wrapped in a one-field record. A record with one field is
encoded exactly like the field, so the binary format is unchanged, while
fastavro reports which branch it read (``int`` and ``long`` branches are both
Python ints otherwise).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, Mapping

from connector.api.config_def import ConfigDef
from connector.api.errors import DataException
from connector.api.logical import Date, Decimal, Time, Timestamp, logical_type_of, unscaled_to_bytes
from connector.api.lru import LRUCache
from connector.api.schema import Schema, SchemaBuilder, Type
from connector.api.struct import Struct
from converters.confluent.connect_names import (
    CONNECT_DECIMAL_PRECISION_PROP,
    CONNECT_PARAMETERS_PROP,
    CONNECT_TYPE_PROP,
    CONNECT_VERSION_PROP,
    DEFAULT_SCHEMA_NAME,
    KEY_FIELD,
    VALUE_FIELD,
)
from converters.confluent.connect_schemas import non_optional, present
from converters.confluent.connect_values import checked_scalar, field_value, logical_to_raw
from converters.confluent.data_config import flag, keyword_arguments
from converters.confluent.sum_types import SumTypes, generalized_union_field_name

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_FULL_NAME = NAMESPACE + "." + DEFAULT_SCHEMA_NAME
MAP_ENTRY_TYPE_NAME = "MapEntry"

CONNECT_NAME_PROP = "connect.name"
CONNECT_DOC_PROP = "connect.doc"
CONNECT_DEFAULT_VALUE_PROP = "connect.default"
CONNECT_INTERNAL_TYPE_NAME = "connect.internal.type"
AVRO_RECORD_DOC_PROP = NAMESPACE + ".record.doc"
AVRO_ENUM_DOC_PREFIX_PROP = NAMESPACE + ".enum.doc."
AVRO_FIELD_DOC_PREFIX_PROP = NAMESPACE + ".field.doc."
AVRO_FIELD_DEFAULT_FLAG_PROP = NAMESPACE + ".field.default"
AVRO_ENUM_DEFAULT_PREFIX_PROP = NAMESPACE + ".enum.default."
CONNECT_TYPE_INT8 = "int8"
CONNECT_TYPE_INT16 = "int16"
AVRO_TYPE_UNION = NAMESPACE + ".Union"
AVRO_TYPE_ENUM = NAMESPACE + ".Enum"
AVRO_TYPE_ANYTHING = NAMESPACE + ".Anything"
AVRO_PROP = "avro"
AVRO_LOGICAL_TYPE_PROP = "logicalType"
AVRO_LOGICAL_DECIMAL = "decimal"
AVRO_LOGICAL_DECIMAL_SCALE_PROP = "scale"
AVRO_LOGICAL_DECIMAL_PRECISION_PROP = "precision"
CONNECT_AVRO_FIXED_SIZE_PROP = "connect.fixed.size"
CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT = 64

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
NAMED = frozenset({"record", "enum", "fixed"})

NO_DEFAULT: Any = type("NoDefault", (), {"__repr__": lambda self: "NO_DEFAULT"})()


# ==================================================================================================
# Avro schema model
# ==================================================================================================

@dataclass(eq=False, slots=True)
class AvroField:
    """A record's field; ``default`` is :data:`NO_DEFAULT` when it has none, ``props`` its other properties."""

    name: str
    schema: AvroSchema
    doc: str | None
    default: Any
    props: dict
    aliases: list[str]
    order: str | None
    pos: int

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


class AvroSchema:
    """A parsed Avro schema node. Named types are shared objects (references resolve to them)."""

    __slots__ = ("kind", "props", "name", "doc", "aliases", "fields", "symbols", "enum_default",
                 "size", "items", "values", "branches", "_by_name")

    def __init__(self, kind: str, props: dict | None = None, **kw: Any):
        self.kind = kind
        self.props = props or {}
        self.name: str | None = kw.get("name")
        self.doc: str | None = kw.get("doc")
        self.aliases: list[str] = kw.get("aliases") or []
        self.fields: list[AvroField] = kw.get("fields") or []
        self.symbols: list[str] = kw.get("symbols") or []
        self.enum_default: str | None = kw.get("enum_default")
        self.size: int | None = kw.get("size")
        self.items: AvroSchema | None = kw.get("items")
        self.values: AvroSchema | None = kw.get("values")
        self.branches: list[AvroSchema] = kw.get("branches") or []
        self._by_name: dict[str, AvroField] | None = None

    @property
    def namespace(self) -> str | None:
        if self.name and "." in self.name:
            return self.name.rsplit(".", 1)[0]
        return None

    @property
    def short_name(self) -> str | None:
        return self.name.rsplit(".", 1)[-1] if self.name else None

    def field(self, name: str) -> AvroField | None:
        if self._by_name is None:
            self._by_name = {f.name: f for f in self.fields}
        return self._by_name.get(name)

    def type_name(self) -> str:
        """The name a union uses for this branch: full name of named types, else the type."""
        return self.name if self.kind in NAMED else self.kind  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"AvroSchema({self.kind}{' ' + self.name if self.name else ''})"


def _fullname(name: str, namespace: str | None, enclosing: str | None) -> str:
    if "." in name:
        return name
    ns = namespace if namespace is not None else enclosing
    return f"{ns}.{name}" if ns else name


def parse_schema(obj: Any, named: dict[str, AvroSchema] | None = None) -> AvroSchema:
    """Parse an Avro schema (JSON text or decoded JSON).

    ``named`` maps full names to already-parsed named types (the schemas of
    registry references); the types this schema defines are added to it.
    """
    if isinstance(obj, (str, bytes)) and not (isinstance(obj, str) and obj in PRIMITIVES):
        try:
            obj = json.loads(obj)
        except ValueError as exc:
            if isinstance(obj, str) and obj and obj[0] not in "{[\"":
                pass  # a bare name reference
            else:
                raise DataException(f"Invalid Avro schema: {exc}") from exc
    return _Parser(named if named is not None else {}).parse(obj, None)


class _Parser:
    def __init__(self, named: dict[str, AvroSchema]):
        self.named = named

    def lookup(self, ref: str, ns: str | None) -> AvroSchema:
        if "." not in ref and ns:
            found = self.named.get(f"{ns}.{ref}")
            if found is not None:
                return found
        found = self.named.get(ref)
        if found is None:
            raise DataException(f"Invalid Avro schema: undefined name: {ref}")
        return found

    def define(self, node: AvroSchema) -> None:
        assert node.name is not None
        if node.name in self.named:
            raise DataException(f"Invalid Avro schema: can't redefine: {node.name}")
        self.named[node.name] = node

    def parse(self, obj: Any, ns: str | None) -> AvroSchema:
        if isinstance(obj, str):
            if obj in PRIMITIVES:
                return AvroSchema(obj)
            return self.lookup(obj, ns)
        if isinstance(obj, list):
            branches = [self.parse(b, ns) for b in obj]
            seen = set()
            for b in branches:
                if b.kind == "union":
                    raise DataException("Invalid Avro schema: unions may not immediately contain unions")
                key = b.type_name()
                if key in seen:
                    raise DataException(f"Invalid Avro schema: duplicate in union: {key}")
                seen.add(key)
            return AvroSchema("union", branches=branches)
        if not isinstance(obj, dict):
            raise DataException(f"Invalid Avro schema: unexpected JSON {obj!r}")
        t = obj.get("type")
        if t is None:
            raise DataException(f"Invalid Avro schema: no type in {json.dumps(obj)[:200]}")
        if isinstance(t, (dict, list)):
            return self.parse(t, ns)
        if not isinstance(t, str):
            raise DataException(f"Invalid Avro schema: type must be a string, got {t!r}")
        if t in PRIMITIVES:
            return AvroSchema(t, {k: v for k, v in obj.items() if k != "type"})
        if t in ("record", "error", "enum", "fixed"):
            return self.parse_named(t, obj, ns)
        if t == "array":
            if "items" not in obj:
                raise DataException("Invalid Avro schema: array has no items")
            props = {k: v for k, v in obj.items() if k not in ("type", "items")}
            return AvroSchema("array", props, items=self.parse(obj["items"], ns))
        if t == "map":
            if "values" not in obj:
                raise DataException("Invalid Avro schema: map has no values")
            props = {k: v for k, v in obj.items() if k not in ("type", "values")}
            return AvroSchema("map", props, values=self.parse(obj["values"], ns))
        return self.lookup(t, ns)

    def parse_named(self, t: str, obj: dict, ns: str | None) -> AvroSchema:
        name = obj.get("name")
        if not isinstance(name, str) or not name:
            raise DataException(f"Invalid Avro schema: a {t} needs a name")
        namespace = obj.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise DataException("Invalid Avro schema: namespace must be a string")
        full = _fullname(name, namespace if namespace is not None else None, ns)
        own_ns = full.rsplit(".", 1)[0] if "." in full else None
        reserved = {"type", "name", "namespace", "doc", "aliases", "fields", "symbols", "size",
                    "default" if t == "enum" else "\0"}
        props = {k: v for k, v in obj.items() if k not in reserved}
        aliases = [_fullname(a, None, own_ns) for a in obj.get("aliases") or [] if isinstance(a, str)]
        doc = obj.get("doc") if isinstance(obj.get("doc"), str) else None
        if t in ("record", "error"):
            node = AvroSchema("record", props, name=full, doc=doc, aliases=aliases)
            self.define(node)
            raw_fields = obj.get("fields")
            if not isinstance(raw_fields, list):
                raise DataException(f"Invalid Avro schema: record {full} has no fields list")
            fields = []
            names = set()
            for pos, f in enumerate(raw_fields):
                if not isinstance(f, dict) or not isinstance(f.get("name"), str):
                    raise DataException(f"Invalid Avro schema: bad field in record {full}")
                fname = f["name"]
                if fname in names:
                    raise DataException(f"Invalid Avro schema: duplicate field {fname} in {full}")
                names.add(fname)
                if "type" not in f:
                    raise DataException(f"Invalid Avro schema: field {fname} of {full} has no type")
                ftype = self.parse(f["type"], own_ns)
                fprops = {k: v for k, v in f.items()
                          if k not in ("name", "type", "doc", "default", "order", "aliases")}
                fields.append(AvroField(
                    fname, ftype, f.get("doc") if isinstance(f.get("doc"), str) else None,
                    f["default"] if "default" in f else NO_DEFAULT, fprops,
                    [a for a in f.get("aliases") or [] if isinstance(a, str)], f.get("order"), pos))
            node.fields = fields
            return node
        if t == "enum":
            symbols = obj.get("symbols")
            if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
                raise DataException(f"Invalid Avro schema: enum {full} needs a list of symbols")
            if len(set(symbols)) != len(symbols):
                raise DataException(f"Invalid Avro schema: duplicate enum symbol in {full}")
            default = obj.get("default")
            node = AvroSchema("enum", props, name=full, doc=doc, aliases=aliases,
                              symbols=list(symbols),
                              enum_default=default if isinstance(default, str) else None)
            self.define(node)
            return node
        size = obj.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise DataException(f"Invalid Avro schema: fixed {full} needs a non-negative size")
        node = AvroSchema("fixed", props, name=full, doc=doc, aliases=aliases, size=size)
        self.define(node)
        return node


# ==================================================================================================
# The compiled (fastavro) form
# ==================================================================================================

@dataclass
class CompiledSchema:
    """A schema prepared for fastavro: logical types stripped, Connect-union branches wrapped."""

    node: AvroSchema
    json: Any
    parsed: Any = None
    #: wrapper record full name -> branch index in its union
    branch_of: dict[str, int] = dc_field(default_factory=dict)
    #: id(union node) -> wrapper name per branch (None for the null branch)
    wrappers: dict[int, list[str | None]] = dc_field(default_factory=dict)


def is_connect_union(node: AvroSchema, flatten_singleton_unions: bool = True) -> bool:
    """Whether a union maps to a Connect Union struct (rather than optional/flattened)."""
    n = len(node.branches)
    if n == 1 and flatten_singleton_unions:
        return False
    if n == 2 and any(b.kind == "null" for b in node.branches):
        return False
    return True


def compile_schema(node: AvroSchema, *, flatten_singleton_unions: bool = True) -> CompiledSchema:
    """The fastavro-ready form of ``node`` (see the module docstring)."""
    import fastavro

    compiled = CompiledSchema(node, None)
    emitted: set[str] = set()
    counter = [0]

    def named_head(n: AvroSchema, kind: str) -> dict:
        short = n.short_name
        return {"type": kind, "name": short, "namespace": n.namespace or ""}

    def emit(n: AvroSchema) -> Any:
        k = n.kind
        if k in PRIMITIVES:
            return k
        if k in NAMED:
            if n.name in emitted:
                return n.name
            emitted.add(n.name)  # type: ignore[arg-type]
            head = named_head(n, k)
            if k == "record":
                head["fields"] = [{"name": f.name, "type": emit(f.schema)} for f in n.fields]
            elif k == "enum":
                head["symbols"] = list(n.symbols)
                if n.enum_default is not None:
                    head["default"] = n.enum_default
            else:
                head["size"] = n.size
            return head
        if k == "array":
            return {"type": "array", "items": emit(n.items)}  # type: ignore[arg-type]
        if k == "map":
            return {"type": "map", "values": emit(n.values)}  # type: ignore[arg-type]
        if k == "union":
            if not is_connect_union(n, flatten_singleton_unions):
                return [emit(b) for b in n.branches]
            counter[0] += 1
            uid = counter[0]
            out: list[Any] = []
            names: list[str | None] = []
            for i, b in enumerate(n.branches):
                if b.kind == "null":
                    out.append("null")
                    names.append(None)
                    continue
                wname = f"__icefloe_union_{uid}_{i}"
                out.append({"type": "record", "name": wname, "namespace": "",
                            "fields": [{"name": "v", "type": emit(b)}]})
                names.append(wname)
                compiled.branch_of[wname] = i
            compiled.wrappers[id(n)] = names
            return out
        raise DataException(f"Unsupported Avro type {k}")

    compiled.json = emit(node)
    try:
        compiled.parsed = fastavro.parse_schema(compiled.json)
    except Exception as exc:  # fastavro raises several types
        raise DataException(f"Invalid Avro schema: {exc}") from exc
    return compiled


class Branch:
    """A union datum with its branch index (produced by :func:`resolve_datum` and defaults)."""

    __slots__ = ("index", "value")

    def __init__(self, index: int, value: Any):
        self.index = index
        self.value = value


# ==================================================================================================
# AvroData
# ==================================================================================================

class _Spec:
    """A schema being built (collects what Java's SchemaBuilder would hold)."""

    __slots__ = ("type", "optional", "name", "version", "doc", "params", "fields", "key", "value",
                 "default", "has_default")

    def __init__(self, type: Type):
        self.type = type
        self.optional = False
        self.name: str | None = None
        self.version: int | None = None
        self.doc: str | None = None
        self.params: dict[str, str] = {}
        self.fields: list[tuple[str, Schema]] = []
        self.key: Schema | None = None
        self.value: Schema | None = None
        self.default: Any = None
        self.has_default = False

    def builder(self, with_default: bool) -> SchemaBuilder:
        if self.type is Type.ARRAY:
            b = SchemaBuilder.array(self.value)
        elif self.type is Type.MAP:
            b = SchemaBuilder.map(self.key, self.value)
        else:
            b = SchemaBuilder(self.type)
        if self.optional:
            b.optional()
        if self.name is not None:
            b.name(self.name)
        if self.version is not None:
            b.version(self.version)
        if self.doc is not None:
            b.doc(self.doc)
        if self.params:
            b.parameters(self.params)
        for name, schema in self.fields:
            b.field(name, schema)
        if with_default and self.has_default and self.default is not None:
            b.default_value(self.default)
        return b

    def build(self) -> Schema:
        return self.builder(True).build()


def java_url_encode(text: str) -> str:
    out = []
    for ch in text:
        if ch.isascii() and (ch.isalnum() or ch in ".-*_"):
            out.append(ch)
        elif ch == " ":
            out.append("+")
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def do_scrub_name(name: str | None) -> str | None:
    """Confluent's ``AvroData.doScrubName``: make ``name`` a valid Avro name."""
    if not name:
        return name

    def ok(c: str) -> bool:
        return c.isascii() and (c.isalnum() or c == "_")

    if all(ok(c) for c in name) and not name[0].isdigit():
        return name
    encoded = java_url_encode(name)
    if encoded[0].isdigit():
        encoded = "x" + encoded
    return "".join(c if ok(c) else "_" for c in encoded)


def _java_string(value: Any) -> str:
    """What Java's ``Object.toString`` gives for a JSON property value (approximately)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


_LOGICAL_NAMES = {Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME}
#: Avro's logical types over int and long that are Connect's Date, Time and Timestamp, and back.
_CONNECT_LOGICAL_TYPES: dict[tuple[str, str], Any] = {
    ("int", "date"): Date, ("int", "time-millis"): Time, ("long", "timestamp-millis"): Timestamp,
}
_AVRO_LOGICAL_TYPE_OF = {cls.LOGICAL_NAME: logical for (_, logical), cls in _CONNECT_LOGICAL_TYPES.items()}
#: The logical types over integers: their class, underlying type and the unit of their values.
_INTEGER_LOGICAL_TYPES: dict[str, tuple[Any, Type, str]] = {
    Date.LOGICAL_NAME: (Date, Type.INT32, "days"),
    Time.LOGICAL_NAME: (Time, Type.INT32, "ms"),
    Timestamp.LOGICAL_NAME: (Timestamp, Type.INT64, "ms"),
}

_CONNECT_TO_AVRO_TYPE = {
    Type.INT32: "int", Type.INT64: "long", Type.FLOAT32: "float", Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean", Type.STRING: "string", Type.BYTES: "bytes", Type.ARRAY: "array",
    Type.MAP: "map",
}

ANYTHING_SCHEMA_JSON = {
    "type": "record", "name": "Anything", "namespace": NAMESPACE,
    "fields": [
        {"name": "boolean", "type": ["null", "boolean"], "default": None},
        {"name": "bytes", "type": ["null", "bytes"], "default": None},
        {"name": "double", "type": ["null", "double"], "default": None},
        {"name": "float", "type": ["null", "float"], "default": None},
        {"name": "int", "type": ["null", "int"], "default": None},
        {"name": "long", "type": ["null", "long"], "default": None},
        {"name": "string", "type": ["null", "string"], "default": None},
        {"name": "array", "type": ["null", {"type": "array", "items": AVRO_TYPE_ANYTHING}],
         "default": None},
        {"name": "map", "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "MapEntry", "namespace": NAMESPACE, "fields": [
                {"name": "key", "type": AVRO_TYPE_ANYTHING},
                {"name": "value", "type": AVRO_TYPE_ANYTHING}]}}], "default": None},
    ],
}


#: Confluent's ``AvroDataConfig`` (its ``schemas.cache.config`` is the converter's, declared with the client's).
AVRO_DATA_CONFIG = ConfigDef([
    flag("connect.meta.data", True, "low",
         "record/field docs, enum docs and defaults become `io.confluent.connect.avro.*` parameters"),
    flag("enhanced.avro.schema.support", False, "medium", "union branch names use record full names"),
    flag("generalized.sum.type.support", False, "medium",
         "unions and enums as `connect_union_*` / `org.apache.kafka.connect.data.Enum`"),
    flag("scrub.invalid.names", False, "medium", "writing: invalid Avro names are rewritten"),
    flag("ignore.default.for.nullables", False, "low", "writing: a null field is not replaced by its default"),
    flag("flatten.singleton.unions", True, "low", "a one-branch union `[T]` reads as `T`"),
    flag("allow.optional.map.keys", False, "low",
         "writing: a map with optional string keys becomes an Avro `map` (else an array of entries)"),
])


class AvroData:
    """Converts between Avro (schemas and fastavro datums) and Connect (schemas and values)."""

    def __init__(
        self,
        *,
        connect_meta_data: bool = True,
        enhanced_avro_schema_support: bool = False,
        generalized_sum_type_support: bool = False,
        scrub_invalid_names: bool = False,
        ignore_default_for_nullables: bool = False,
        flatten_singleton_unions: bool = True,
        allow_optional_map_keys: bool = False,
        cache_size: int = 1000,
    ):
        self.connect_meta_data = connect_meta_data
        self.enhanced = enhanced_avro_schema_support
        self.generalized = generalized_sum_type_support
        self.sum_types = SumTypes(AVRO_TYPE_ENUM, AVRO_TYPE_UNION, generalized_sum_type_support)
        self.scrub = scrub_invalid_names
        self.ignore_default_for_nullables = ignore_default_for_nullables
        self.flatten_singleton_unions = flatten_singleton_unions
        self.allow_optional_map_keys = allow_optional_map_keys

        self._from_connect_cache: LRUCache[Any, Any] = LRUCache(cache_size)
        self._union_index = 0

    @classmethod
    def from_config(cls, values: Mapping[str, Any]) -> "AvroData":
        """From parsed ``AVRO_DATA_CONFIG`` values plus ``schemas.cache.config``."""
        return cls(**keyword_arguments(AVRO_DATA_CONFIG, values), cache_size=max(1, values["schemas.cache.config"]))

    # ---------------------------------------------------------------------------------------------
    # names
    # ---------------------------------------------------------------------------------------------

    def _scrub(self, name: str | None) -> str | None:
        return do_scrub_name(name) if self.scrub else name

    def _split_name(self, full: str | None) -> tuple[str | None, str | None]:
        if not full:
            return None, full
        parts = [self._scrub(p) or "" for p in full.split(".")]
        if len(parts) <= 1:
            return None, parts[0]
        return ".".join(parts[:-1]), parts[-1]

    def _scrub_full(self, name: str | None) -> str | None:
        if name is None or not self.scrub:
            return name
        ns, short = self._split_name(name)
        return short if ns is None else f"{ns}.{short}"

    def union_member_field_name(self, node: AvroSchema, index: int) -> str:
        if self.generalized:
            return generalized_union_field_name(index)
        if node.kind in NAMED:
            if self.enhanced:
                return node.name  # type: ignore[return-value]
            return self._split_name(node.short_name)[1]  # type: ignore[return-value]
        return node.kind

    def union_field_names(self, node: AvroSchema) -> list[str | None]:
        """The Connect Union struct field for each branch (None for the null branch)."""
        return [None if b.kind == "null" else self.union_member_field_name(b, i)
                for i, b in enumerate(node.branches)]

    # ---------------------------------------------------------------------------------------------
    # Avro schema -> Connect schema
    # ---------------------------------------------------------------------------------------------

    def to_connect_schema(self, node: AvroSchema, version: int | None = None) -> Schema | None:
        """The Connect schema of an Avro schema; ``version`` applies to the top-level schema.

        Returns None for Confluent's schemaless ``io.confluent.connect.avro.Anything``.
        """
        if node.kind == "record" and node.name == AVRO_TYPE_ANYTHING:
            return None
        self._union_index = 0
        return self._to_connect(node, False, NO_DEFAULT, None, version, ())

    def _to_connect(self, node: AvroSchema, force_optional: bool, field_default: Any,
                    doc_default: str | None, version: int | None, stack: tuple) -> Schema:
        type_prop = node.props.get(CONNECT_TYPE_PROP)
        logical = node.props.get(AVRO_LOGICAL_TYPE_PROP)
        logical = logical if isinstance(logical, str) else None
        k = node.kind
        spec: _Spec

        if k == "boolean":
            spec = _Spec(Type.BOOLEAN)
        elif k in ("bytes", "fixed"):
            if logical is not None and logical.lower() == AVRO_LOGICAL_DECIMAL:
                scale_node = node.props.get(AVRO_LOGICAL_DECIMAL_SCALE_PROP)
                scale = int(scale_node) if isinstance(scale_node, (int, float)) and not isinstance(
                    scale_node, bool) else 0
                spec = _Spec(Type.BYTES)
                spec.name = Decimal.LOGICAL_NAME
                spec.version = 1
                spec.params["scale"] = str(scale)
                precision = node.props.get(AVRO_LOGICAL_DECIMAL_PRECISION_PROP)
                if precision is not None:
                    if not isinstance(precision, (int, float)) or isinstance(precision, bool):
                        raise DataException(
                            "precision property must be a JSON Integer. "
                            "https://avro.apache.org/docs/1.9.1/spec.html#Decimal")
                    if int(precision) != CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT:
                        spec.params[CONNECT_DECIMAL_PRECISION_PROP] = str(int(precision))
            else:
                spec = _Spec(Type.BYTES)
            if k == "fixed":
                spec.params[CONNECT_AVRO_FIXED_SIZE_PROP] = str(node.size)
        elif k == "double":
            spec = _Spec(Type.FLOAT64)
        elif k == "float":
            spec = _Spec(Type.FLOAT32)
        elif k == "int":
            if type_prop is None or logical is not None:  # a logical type wins over connect.type
                spec = _integer_spec(k, logical, Type.INT32)
            else:
                int_types: dict[Any, Type] = {CONNECT_TYPE_INT8: Type.INT8, CONNECT_TYPE_INT16: Type.INT16}
                connect_type = int_types.get(type_prop)
                if connect_type is None:
                    raise DataException("Connect type annotation for Avro int field is null")
                spec = _Spec(connect_type)
        elif k == "long":
            spec = _integer_spec(k, logical, Type.INT64)
        elif k == "string":
            spec = _Spec(Type.STRING)
        elif k == "array":
            elem = node.items
            assert elem is not None
            if _is_map_entry(elem):
                if len(elem.fields) != 2 or elem.field(KEY_FIELD) is None or elem.field(
                        VALUE_FIELD) is None:
                    raise DataException("Found map encoded as array of key-value pairs, but array "
                                        "elements do not match the expected format.")
                spec = _Spec(Type.MAP)
                spec.key = self._to_connect(elem.field(KEY_FIELD).schema, False, NO_DEFAULT,  # type: ignore[union-attr]
                                            None, None, stack)
                spec.value = self._to_connect(elem.field(VALUE_FIELD).schema, False, NO_DEFAULT,  # type: ignore[union-attr]
                                              None, None, stack)
            else:
                spec = _Spec(Type.ARRAY)
                spec.value = self._to_connect(elem, False, NO_DEFAULT, None, None, stack)
        elif k == "map":
            spec = _Spec(Type.MAP)
            spec.key = Schema.STRING_SCHEMA
            spec.value = self._to_connect(node.values, False, NO_DEFAULT, None, None, stack)  # type: ignore[arg-type]
        elif k == "record":
            if any(s is node for s in stack):
                raise DataException(
                    f"Recursive Avro schema {node.name} is not supported: Connect schemas "
                    f"cannot refer to themselves")
            stack = stack + (node,)
            spec = _Spec(Type.STRUCT)
            if self.connect_meta_data and node.doc is not None:
                spec.params[AVRO_RECORD_DOC_PROP] = node.doc
            for f in node.fields:
                if self.connect_meta_data and f.doc is not None:
                    spec.params[AVRO_FIELD_DOC_PREFIX_PROP + f.name] = f.doc
                field_schema = self._to_connect(f.schema, False, f.default, f.doc, None, stack)
                if self.connect_meta_data:
                    field_params = f.props.get(CONNECT_PARAMETERS_PROP)
                    if isinstance(field_params, dict):
                        field_schema = _apply_field_level_params(field_schema, field_params)
                spec.fields.append((f.name, field_schema))
        elif k == "enum":
            spec = _Spec(Type.STRING)
            short = node.short_name
            if self.connect_meta_data:
                if node.doc is not None:
                    spec.params[AVRO_ENUM_DOC_PREFIX_PROP + str(short)] = node.doc
                if node.enum_default is not None:
                    spec.params[AVRO_ENUM_DEFAULT_PREFIX_PROP + str(short)] = node.enum_default
            spec.params.update(self.sum_types.enum_parameters(node.name, node.symbols))  # type: ignore[arg-type]
        elif k == "union":
            branches = node.branches
            if len(branches) == 1 and self.flatten_singleton_unions:
                return self._to_connect(branches[0], False, NO_DEFAULT, doc_default, None, stack)
            if len(branches) == 2 and any(b.kind == "null" for b in branches):
                member = next(b for b in branches if b.kind != "null")
                return self._to_connect(member, True, NO_DEFAULT, doc_default, None, stack)
            union_name, union_params = self.sum_types.union(self._union_index)
            self._union_index += 1
            spec = _Spec(Type.STRUCT)
            spec.name = union_name
            spec.params.update(union_params)
            seen: set[str] = set()
            for i, member in enumerate(branches):
                if member.kind == "null":
                    spec.optional = True
                    continue
                member_name = self.union_member_field_name(member, i)
                if member_name in seen:
                    raise DataException("Multiple union schemas map to the Connect union field name")
                seen.add(member_name)
                spec.fields.append((member_name, self._to_connect(member, True, NO_DEFAULT, None, None,
                                                                  stack)))
        elif k == "null":
            raise DataException("Standalone null schemas are not supported by this converter")
        else:
            raise DataException(f"Couldn't translate unsupported schema type {k}.")

        # --- metadata ---
        doc_val = node.props.get(CONNECT_DOC_PROP)
        if self.connect_meta_data and isinstance(doc_val, str):
            spec.doc = doc_val

        version_int = -1
        version_node = node.props.get(CONNECT_VERSION_PROP)
        if version_node is not None:
            if not isinstance(version_node, (int, float)) or isinstance(version_node, bool):
                raise DataException(f"Invalid Connect version found: {version_node}")
            version_int = int(version_node)
        elif version is not None:
            version_int = int(version)
        if version_int >= 0:
            if spec.version is not None and spec.version != version_int:
                raise DataException(
                    f"Mismatched versions: version already added to SchemaBuilder ({spec.version}) "
                    f"differs from version in source schema ({version_int})")
            spec.version = version_int

        parameters = node.props.get(CONNECT_PARAMETERS_PROP)
        if self.connect_meta_data and parameters is not None:
            if not isinstance(parameters, dict):
                raise DataException(f"Expected JSON object for schema parameters but found: "
                                    f"{parameters}")
            for pk, pv in parameters.items():
                if not isinstance(pv, str):
                    raise DataException(f"Expected schema parameter values to be strings but "
                                        f"found: {pv}")
                spec.params[pk] = pv

        for pk, pv in node.props.items():
            if pk.startswith(AVRO_PROP):
                spec.params[pk] = _java_string(pv)

        connect_default = node.props.get(CONNECT_DEFAULT_VALUE_PROP, NO_DEFAULT)
        if field_default is NO_DEFAULT:
            field_default = connect_default
        elif self.connect_meta_data and connect_default is NO_DEFAULT:
            spec.params[AVRO_FIELD_DEFAULT_FLAG_PROP] = "true"

        name: str | None = None
        connect_name = node.props.get(CONNECT_NAME_PROP)
        if connect_name is not None:
            if not isinstance(connect_name, str):
                raise DataException(f"Invalid schema name: {connect_name}")
            name = connect_name
        elif k in ("record", "enum"):
            name = node.name
        elif k == "fixed":
            if spec.name != Decimal.LOGICAL_NAME:
                name = node.name
        if name is not None and not name.startswith(DEFAULT_SCHEMA_FULL_NAME):
            if spec.name is not None:
                if name != spec.name:
                    raise DataException(
                        f"Mismatched names: name already added to SchemaBuilder ({spec.name}) "
                        f"differs from name in source schema ({name})")
            else:
                spec.name = name

        if force_optional:
            spec.optional = True

        if field_default is not NO_DEFAULT and field_default is not None:
            try:
                peek = spec.builder(False).build()
                spec.default = self._default_from_avro(peek, node, field_default)
                spec.has_default = True
                return spec.build()
            except DataException:
                spec.default = None
                spec.has_default = False
        return spec.build()

    # --- defaults ---

    def _default_from_avro(self, schema: Schema, node: AvroSchema, value: Any) -> Any:
        raw = self._default_raw(schema, node, value)
        return _to_logical(schema, raw)

    def _default_raw(self, schema: Schema, node: AvroSchema, value: Any) -> Any:
        if value is None:
            return None
        k = node.kind
        t = schema.type
        try:
            if k == "int":
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    raise DataException(f"Invalid default {value!r} for int")
                v = int(value)
                if t in (Type.INT8, Type.INT16, Type.INT32):
                    return v
                return None
            if k == "long":
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    raise DataException(f"Invalid default {value!r} for long")
                return int(value)
            if k in ("float", "double"):
                if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
                    return float(value)
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    raise DataException(f"Invalid default {value!r} for {k}")
                return float(value)
            if k == "boolean":
                if not isinstance(value, bool):
                    raise DataException(f"Invalid default {value!r} for boolean")
                return value
            if k in ("string", "enum"):
                if not isinstance(value, str):
                    raise DataException(f"Invalid default {value!r} for {k}")
                return value
            if k in ("bytes", "fixed"):
                if not isinstance(value, str):
                    raise DataException(f"Invalid default {value!r} for {k}")
                return value.encode("latin-1")
            if k == "array":
                if not isinstance(value, list):
                    raise DataException("Invalid JSON for array default value")
                if t is Type.MAP:  # MapEntry array
                    entry = node.items
                    out = {}
                    for e in value:
                        if not isinstance(e, dict):
                            raise DataException("Invalid JSON for map entry default value")
                        out[self._default_from_avro(schema.key_schema, entry.field(KEY_FIELD).schema,  # type: ignore[union-attr,arg-type]
                                                    e.get(KEY_FIELD))] = self._default_from_avro(
                            schema.value_schema, entry.field(VALUE_FIELD).schema, e.get(VALUE_FIELD))  # type: ignore[union-attr,arg-type]
                    return out
                return [self._default_from_avro(schema.value_schema, node.items, e) for e in value]  # type: ignore[arg-type]
            if k == "map":
                if not isinstance(value, dict):
                    raise DataException("Invalid JSON for map default value")
                return {mk: self._default_from_avro(schema.value_schema, node.values, mv)  # type: ignore[arg-type]
                        for mk, mv in value.items()}
            if k == "record":
                if not isinstance(value, dict):
                    raise DataException("Invalid JSON for record default value")
                struct = Struct(schema)
                for f in node.fields:
                    cf = schema.field(f.name)
                    if cf is None:
                        continue
                    fv = value.get(f.name, NO_DEFAULT)
                    if fv is NO_DEFAULT:
                        fv = f.default if f.has_default else None
                    converted = self._default_from_avro(cf.schema, f.schema, fv)
                    if converted is not None:
                        struct.put(cf, converted)
                return struct
            if k == "union":
                first = node.branches[0]
                if first.kind == "null":
                    return None
                if schema.type is Type.STRUCT and self.sum_types.is_union(schema):
                    fname = self.union_member_field_name(first, 0)
                    member = schema.field(fname)
                    if member is None:
                        return None
                    return Struct(schema).put(fname, self._default_from_avro(member.schema, first,
                                                                             value))
                return self._default_from_avro(schema, first, value)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            raise DataException(f"Invalid default value {value!r}: {exc}") from exc
        return None

    # ---------------------------------------------------------------------------------------------
    # Avro datum -> Connect value
    # ---------------------------------------------------------------------------------------------

    def to_connect_value(self, schema: Schema | None, node: AvroSchema, datum: Any,
                         compiled: CompiledSchema | None = None) -> Any:
        """Convert a datum read by fastavro (with ``compiled``) into the Connect value for ``schema``."""
        if schema is None:
            return self._from_anything(datum)
        return self._value(schema, node, datum, compiled.branch_of if compiled else {})

    def _value(self, schema: Schema, node: AvroSchema, datum: Any, branch_of: dict) -> Any:
        if datum is None:
            if not schema.optional:
                raise DataException(
                    f"Found null value for non-optional schema {schema!r}")
            return None
        k = node.kind
        if k == "union":
            if isinstance(datum, Branch):
                index, inner = datum.index, datum.value
            elif is_connect_union(node, self.flatten_singleton_unions):
                if isinstance(datum, tuple):
                    index = branch_of[datum[0]]
                    inner = datum[1]["v"]
                elif isinstance(datum, dict) and "v" in datum and len(datum) == 1:
                    index = next(i for i, b in enumerate(node.branches) if b.kind != "null")
                    inner = datum["v"]
                else:
                    raise DataException(f"Unexpected datum {type(datum).__name__} for a union")
            else:
                index = next(i for i, b in enumerate(node.branches) if b.kind != "null")
                inner = datum
            member = node.branches[index]
            if is_connect_union(node, self.flatten_singleton_unions):
                fname = self.union_member_field_name(member, index)
                field = schema.field(fname)
                if field is None:
                    raise DataException("Did not find matching union field for data")
                return Struct(schema).put(field, self._value(field.schema, member, inner, branch_of))
            return self._value(schema, member, inner, branch_of)

        t = schema.type
        if t is Type.STRUCT:
            if not isinstance(datum, dict):
                raise DataException(f"Invalid type for STRUCT: {type(datum).__name__}")
            struct = Struct(schema)
            for f in schema.fields():
                af = node.field(self._scrub(f.name) or f.name)
                if af is None:
                    raise DataException(f"Avro record {node.name} has no field {f.name}")
                v = self._value(f.schema, af.schema, datum.get(af.name), branch_of)
                if v is not None:
                    struct.put(f, v)
            return struct
        if t is Type.ARRAY:
            elem_schema = present(schema.value_schema, "array element schema")
            items = present(node.items, "array items")
            return [self._value(elem_schema, items, e, branch_of) for e in datum]
        if t is Type.MAP:
            vs = present(schema.value_schema, "map value schema")
            if k == "map":
                values = present(node.values, "map values")
                return {mk: self._value(vs, values, mv, branch_of) for mk, mv in datum.items()}
            ks = present(schema.key_schema, "map key schema")
            entry = present(node.items, "map entry record")
            kf = present(entry.field(KEY_FIELD), f"map entry field {KEY_FIELD}")
            vf = present(entry.field(VALUE_FIELD), f"map entry field {VALUE_FIELD}")
            out = {}
            for e in datum:
                out[self._value(ks, kf.schema, e.get(KEY_FIELD), branch_of)] = \
                    self._value(vs, vf.schema, e.get(VALUE_FIELD), branch_of)
            return out
        if t is Type.BYTES:
            if not isinstance(datum, (bytes, bytearray, memoryview)):
                raise DataException(f"Invalid class for bytes type, expecting bytes but found "
                                    f"{type(datum).__name__}")
            datum = bytes(datum)
        elif t is Type.STRING:
            if not isinstance(datum, str):
                raise DataException(f"Invalid class for string type, expecting str but found "
                                    f"{type(datum).__name__}")
        elif t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
            if not isinstance(datum, int) or isinstance(datum, bool):
                raise DataException(f"Invalid type for {t.name}: {type(datum).__name__}")
            if t is Type.INT8:
                datum = ((datum + 128) & 0xFF) - 128
            elif t is Type.INT16:
                datum = ((datum + 32768) & 0xFFFF) - 32768
        elif t in (Type.FLOAT32, Type.FLOAT64):
            if not isinstance(datum, (float, int)) or isinstance(datum, bool):
                raise DataException(f"Invalid type for {t.name}: {type(datum).__name__}")
            datum = float(datum)
        elif t is Type.BOOLEAN:
            if not isinstance(datum, bool):
                raise DataException(f"Invalid type for BOOLEAN: {type(datum).__name__}")
        return _to_logical(schema, datum)

    def _from_anything(self, datum: Any) -> Any:
        if datum is None:
            return None
        if not isinstance(datum, dict):
            raise DataException("Invalid Avro data for schemaless Connect data")
        for key in ("boolean", "bytes", "double", "float", "int", "long", "string"):
            v = datum.get(key)
            if v is not None:
                return bytes(v) if key == "bytes" else v
        arr = datum.get("array")
        if arr is not None:
            return [self._from_anything(e) for e in arr]
        m = datum.get("map")
        if m is not None:
            return {self._from_anything(e.get("key")): self._from_anything(e.get("value"))
                    for e in m}
        return None

    # ---------------------------------------------------------------------------------------------
    # Connect schema -> Avro schema
    # ---------------------------------------------------------------------------------------------

    def from_connect_schema(self, schema: Schema | None) -> Any:
        """The Avro schema (decoded JSON) Confluent's AvroData would produce for ``schema``."""
        if schema is None:
            return ANYTHING_SCHEMA_JSON
        cached = self._from_connect_cache.get(schema)
        if cached is not None:
            return cached
        ctx = _FromConnectContext()
        result = self._from_connect(schema, ctx, False, None)
        self._from_connect_cache.put(schema, result)
        return result

    def _name_or_default(self, ctx: "_FromConnectContext", name: str | None) -> tuple[str | None, str]:
        if name is not None:
            ns, short = self._split_name(name)
            return ns, short  # type: ignore[return-value]
        ctx.name_index += 1
        return NAMESPACE, DEFAULT_SCHEMA_NAME + (str(ctx.name_index) if ctx.name_index > 1 else "")

    def _named(self, ctx: "_FromConnectContext", kind: str, ns: str | None, short: str,
               enclosing_ns: str | None) -> dict | str:
        """A named type's head to fill in, or its full name where the schema has defined it already.

        Avro defines a name once and refers to it by its full name after that
        (the definition counts from here, so its own fields may refer to it).
        """
        full = f"{ns}.{short}" if ns else short
        if full in ctx.defined:
            return full
        ctx.defined.add(full)
        head: dict[str, Any] = {"type": kind, "name": short}
        if ns:
            head["namespace"] = ns
        elif enclosing_ns:
            head["namespace"] = ""
        return head

    def _from_connect(self, schema: Schema, ctx: "_FromConnectContext", ignore_optional: bool,
                      enclosing_ns: str | None) -> Any:
        connect_type = None
        t = schema.type
        params = schema.parameters or {}
        base: Any
        if t is Type.INT8:
            connect_type, base = CONNECT_TYPE_INT8, {"type": "int"}
        elif t is Type.INT16:
            connect_type, base = CONNECT_TYPE_INT16, {"type": "int"}
        elif t is Type.INT32:
            base = {"type": "int"}
        elif t is Type.INT64:
            base = {"type": "long"}
        elif t is Type.FLOAT32:
            base = {"type": "float"}
        elif t is Type.FLOAT64:
            base = {"type": "double"}
        elif t is Type.BOOLEAN:
            base = {"type": "boolean"}
        elif t is Type.STRING:
            if (self.generalized or self.enhanced) and self.sum_types.is_enum(params):
                param = self.sum_types.enum_parameter
                symbols = list(self.sum_types.enum_symbols(params))
                _, short = self._name_or_default(ctx, schema.name)
                enum_full = params.get(param) or short
                ens, eshort = self._split_name(enum_full)
                base = self._named(ctx, "enum", ens, eshort or "", enclosing_ns)
                if isinstance(base, dict):
                    doc = params.get(AVRO_ENUM_DOC_PREFIX_PROP + str(short))
                    if doc is not None:
                        base["doc"] = doc
                    base["symbols"] = symbols
                    default = params.get(AVRO_ENUM_DEFAULT_PREFIX_PROP + str(short))
                    if default is not None:
                        base["default"] = default
            else:
                base = {"type": "string"}
        elif t is Type.BYTES:
            if _is_fixed_schema(schema):
                ns, short = self._name_or_default(ctx, schema.name)
                base = self._named(ctx, "fixed", ns, short, enclosing_ns)
                if isinstance(base, dict):
                    base["size"] = int(params[CONNECT_AVRO_FIXED_SIZE_PROP])
            else:
                base = {"type": "bytes"}
            if schema.name == Decimal.LOGICAL_NAME and isinstance(base, dict):
                base[AVRO_LOGICAL_DECIMAL_SCALE_PROP] = int(params.get("scale", "0"))
                base[AVRO_LOGICAL_DECIMAL_PRECISION_PROP] = int(params.get(
                    CONNECT_DECIMAL_PRECISION_PROP, CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT))
        elif t is Type.ARRAY:
            base = {"type": "array",
                    "items": self._from_connect(schema.value_schema, ctx, False, enclosing_ns)}  # type: ignore[arg-type]
        elif t is Type.MAP:
            ks = schema.key_schema
            if ks.type is Type.STRING and (not ks.optional or self.allow_optional_map_keys):  # type: ignore[union-attr]
                base = {"type": "map",
                        "values": self._from_connect(schema.value_schema, ctx, False, enclosing_ns)}  # type: ignore[arg-type]
            else:
                if schema.name is None:
                    ns, short = NAMESPACE, MAP_ENTRY_TYPE_NAME
                    internal = False
                else:
                    ns, short = self._name_or_default(ctx, schema.name)
                    internal = True
                items = self._named(ctx, "record", ns, short, enclosing_ns)
                if isinstance(items, dict):
                    items["fields"] = [
                        self._avro_field(KEY_FIELD, ks, None, ctx, ns),  # type: ignore[arg-type]
                        self._avro_field(VALUE_FIELD, schema.value_schema, None, ctx, ns),  # type: ignore[arg-type]
                    ]
                    if internal:
                        items[CONNECT_INTERNAL_TYPE_NAME] = MAP_ENTRY_TYPE_NAME
                base = {"type": "array", "items": items}
        elif t is Type.STRUCT:
            if self.sum_types.is_union(schema):
                members: list[Any] = []
                if schema.optional:
                    members.append("null")
                for f in schema.fields():
                    members.append(self._from_connect(non_optional(f.schema), ctx, True,
                                                      enclosing_ns))
                return members
            if schema.optional:
                return ["null", self._from_connect(non_optional(schema), ctx, False, enclosing_ns)]
            ns, short = self._name_or_default(ctx, schema.name)
            base = self._named(ctx, "record", ns, short, enclosing_ns)
            if isinstance(base, dict):
                doc = params.get(AVRO_RECORD_DOC_PROP)
                if doc is not None:
                    base["doc"] = doc
                fields = []
                for f in schema.fields():
                    fdoc = params.get(AVRO_FIELD_DOC_PREFIX_PROP + f.name)
                    fields.append(self._avro_field(self._scrub(f.name) or f.name, f.schema, fdoc,
                                                   ctx, ns))
                base["fields"] = fields
        else:
            raise DataException(f"Unknown schema type: {t}")

        if isinstance(base, str):  # a reference to an already defined named type
            final: Any = base
        else:
            if self.connect_meta_data:
                if schema.doc is not None:
                    base[CONNECT_DOC_PROP] = schema.doc
                if schema.version is not None:
                    base[CONNECT_VERSION_PROP] = schema.version
                if params:
                    p = {k: v for k, v in params.items() if k != AVRO_FIELD_DEFAULT_FLAG_PROP}
                    if p:
                        base[CONNECT_PARAMETERS_PROP] = p
                if schema.default is not None and AVRO_FIELD_DEFAULT_FLAG_PROP not in params:
                    base[CONNECT_DEFAULT_VALUE_PROP] = self._default_to_avro(schema, schema.default)
                if schema.name is not None:
                    base[CONNECT_NAME_PROP] = schema.name
                if connect_type is not None:
                    base[CONNECT_TYPE_PROP] = connect_type
            force_legacy_decimal = False
            if schema.name == Decimal.LOGICAL_NAME:
                precision = int(params.get(CONNECT_DECIMAL_PRECISION_PROP,
                                           CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT))
                scale = int(params.get("scale", "0"))
                if scale < 0 or scale > precision:
                    force_legacy_decimal = True
                else:
                    base[AVRO_LOGICAL_TYPE_PROP] = AVRO_LOGICAL_DECIMAL
                if CONNECT_DECIMAL_PRECISION_PROP in params or force_legacy_decimal:
                    base[AVRO_LOGICAL_TYPE_PROP] = AVRO_LOGICAL_DECIMAL
            elif schema.name in _AVRO_LOGICAL_TYPE_OF:
                base[AVRO_LOGICAL_TYPE_PROP] = _AVRO_LOGICAL_TYPE_OF[schema.name]
            for pk, pv in params.items():
                if pk.startswith(AVRO_PROP):
                    base[pk] = pv
            final = base
            if len(base) == 1 and base["type"] in PRIMITIVES:
                final = base["type"]
        if not ignore_optional and schema.optional:
            if schema.default is not None:
                return [final, "null"]
            return ["null", final]
        return final

    def _avro_field(self, name: str, field_schema: Schema, doc: str | None,
                    ctx: "_FromConnectContext", enclosing_ns: str | None) -> dict:
        avro_type = self._from_connect(field_schema, ctx, False, enclosing_ns)
        out: dict[str, Any] = {"name": name, "type": avro_type}
        if doc is not None:
            out["doc"] = doc
        if field_schema.default is not None:
            default = self._default_to_avro(field_schema, field_schema.default)
            if _default_matches(avro_type, default, ctx):
                out["default"] = default
        elif field_schema.optional:
            out["default"] = None
        return out

    def _default_to_avro(self, schema: Schema, value: Any) -> Any:
        if value is None:
            return None
        value = _from_logical(schema, value)
        t = schema.type
        try:
            if t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
                return int(value)
            if t in (Type.FLOAT32, Type.FLOAT64):
                v = float(value)
                return v if math.isfinite(v) else ("NaN" if math.isnan(v) else
                                                   ("Infinity" if v > 0 else "-Infinity"))
            if t is Type.BOOLEAN:
                return bool(value)
            if t is Type.STRING:
                return str(value)
            if t is Type.BYTES:
                return bytes(value).decode("latin-1")
            if t is Type.ARRAY:
                return [self._default_to_avro(schema.value_schema, e) for e in value]  # type: ignore[arg-type]
            if t is Type.MAP:
                ks = schema.key_schema
                if ks.type is Type.STRING and (not ks.optional or self.allow_optional_map_keys):  # type: ignore[union-attr]
                    return {k: self._default_to_avro(schema.value_schema, v) for k, v in value.items()}  # type: ignore[arg-type]
                return [[self._default_to_avro(ks, k), self._default_to_avro(schema.value_schema, v)]  # type: ignore[arg-type]
                        for k, v in value.items()]
            if t is Type.STRUCT:
                is_union = self.sum_types.is_union(schema)
                out = {}
                for f in schema.fields():
                    fd = self._default_to_avro(f.schema, value.get(f))
                    if is_union:
                        return fd
                    out[self._scrub(f.name) or f.name] = fd
                return out
        except (TypeError, ValueError, AttributeError) as exc:
            raise DataException(f"Invalid type used for default value of {t.name} field: "
                                f"{type(value).__name__}") from exc
        raise DataException(f"Unknown schema type:{t}")

    # ---------------------------------------------------------------------------------------------
    # Connect value -> Avro datum (for fastavro with the compiled schema)
    # ---------------------------------------------------------------------------------------------

    def from_connect_value(self, schema: Schema | None, node: AvroSchema, value: Any,
                           compiled: CompiledSchema) -> Any:
        if schema is None:
            return self._to_anything(value)
        return self._datum(schema, node, value, compiled)

    def _datum(self, schema: Schema, node: AvroSchema, value: Any, compiled: CompiledSchema) -> Any:
        if value is None:
            if not schema.optional:
                raise DataException("Found null value for non-optional schema")
            return None
        if node.kind == "union":
            if is_connect_union(node, self.flatten_singleton_unions):
                wrappers = compiled.wrappers[id(node)]
                if self.sum_types.is_union(schema):
                    if not isinstance(value, Struct) or value.schema != schema:
                        raise DataException("Mismatching struct schema")
                    names = self.union_field_names(node)
                    for f in schema.fields():
                        v = field_value(value, f, self.ignore_default_for_nullables)
                        if v is not None:
                            try:
                                index = names.index(f.name)
                            except ValueError:
                                raise DataException(f"Union field {f.name} not in {names}") from None
                            inner = self._datum(f.schema, node.branches[index], v, compiled)
                            return (wrappers[index], {"v": inner})
                    return None
                # a non-union Connect schema written into a general Avro union: pick by type
                for index, b in enumerate(node.branches):
                    if b.kind != "null" and _connect_matches_avro(schema, b):
                        return (wrappers[index], {"v": self._datum(schema, b, value, compiled)})
                raise DataException(f"No branch of the Avro union matches {schema!r}")
            member = next(b for b in node.branches if b.kind != "null")
            return self._datum(schema, member, value, compiled)

        raw = _from_logical(schema, value)
        t = schema.type
        if t is Type.STRUCT:
            if not isinstance(raw, Struct):
                raise DataException(f"Invalid type for STRUCT: {type(raw).__name__}")
            if raw.schema != schema:
                raise DataException("Mismatching struct schema")
            out = {}
            for f in schema.fields():
                name = self._scrub(f.name) or f.name
                af = node.field(name)
                if af is None:
                    raise DataException(f"Avro record {node.name} has no field {name}")
                fv = field_value(raw, f, self.ignore_default_for_nullables)
                out[name] = self._datum(f.schema, af.schema, fv, compiled)
            return out
        if t is Type.ARRAY:
            if not isinstance(raw, (list, tuple)):
                raise DataException(f"Invalid type for ARRAY: {type(raw).__name__}")
            return [self._datum(schema.value_schema, node.items, e, compiled) for e in raw]  # type: ignore[arg-type]
        if t is Type.MAP:
            if not isinstance(raw, dict):
                raise DataException(f"Invalid type for MAP: {type(raw).__name__}")
            if node.kind == "map":
                return {k: self._datum(schema.value_schema, node.values, v, compiled)  # type: ignore[arg-type]
                        for k, v in raw.items()}
            entry = node.items
            kf, vf = entry.field(KEY_FIELD), entry.field(VALUE_FIELD)  # type: ignore[union-attr]
            return [{KEY_FIELD: self._datum(schema.key_schema, kf.schema, k, compiled),  # type: ignore[union-attr,arg-type]
                     VALUE_FIELD: self._datum(schema.value_schema, vf.schema, v, compiled)}  # type: ignore[union-attr,arg-type]
                    for k, v in raw.items()]
        if t is Type.BYTES:
            if not isinstance(raw, (bytes, bytearray, memoryview)):
                raise DataException(f"Invalid type for BYTES: {type(raw).__name__}")
            raw = bytes(raw)
            if node.kind == "fixed":
                if schema.name == Decimal.LOGICAL_NAME:
                    raw = _pad_to_fixed(raw, node.size)  # type: ignore[arg-type]
                if len(raw) != node.size:
                    raise DataException(f"Fixed size {node.size} does not match value of "
                                        f"{len(raw)} bytes")
            return raw
        raw = checked_scalar(t, raw)
        if t is Type.STRING and node.kind == "enum" and raw not in node.symbols:
            raise DataException(f"Enum symbol {raw!r} not in {node.name} {node.symbols}")
        return raw

    def _to_anything(self, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, bool):
            return {"boolean": value}
        if isinstance(value, int):
            return {"long": value}
        if isinstance(value, float):
            return {"double": value}
        if isinstance(value, str):
            return {"string": value}
        if isinstance(value, (bytes, bytearray, memoryview)):
            return {"bytes": bytes(value)}
        if isinstance(value, (list, tuple)):
            return {"array": [self._to_anything(e) for e in value]}
        if isinstance(value, dict):
            return {"map": [{"key": self._to_anything(k), "value": self._to_anything(v)}
                            for k, v in value.items()]}
        raise DataException(f"Unknown Java type for schemaless data: {type(value).__name__}")


@dataclass
class _FromConnectContext:
    name_index: int = 0
    defined: set = dc_field(default_factory=set)


# ==================================================================================================
# helpers
# ==================================================================================================

def _logical_spec(cls: Any) -> _Spec:
    base = cls.SCHEMA
    spec = _Spec(base.type)
    spec.name = base.name
    spec.version = base.version
    return spec


def _integer_spec(kind: str, logical: str | None, plain: Type) -> _Spec:
    """An Avro int or long: Connect's Date, Time or Timestamp for their Avro logical types, else ``plain``."""
    cls = _CONNECT_LOGICAL_TYPES.get((kind, logical.lower())) if logical is not None else None
    return _logical_spec(cls) if cls is not None else _Spec(plain)


def _is_map_entry(node: AvroSchema) -> bool:
    if node.kind != "record":
        return False
    if node.name == f"{NAMESPACE}.{MAP_ENTRY_TYPE_NAME}":
        return True
    return node.props.get(CONNECT_INTERNAL_TYPE_NAME) == MAP_ENTRY_TYPE_NAME


def _is_fixed_schema(schema: Schema) -> bool:
    return (schema.type is Type.BYTES and schema.name is not None
            and CONNECT_AVRO_FIXED_SIZE_PROP in (schema.parameters or {}))


def _apply_field_level_params(original: Schema, field_params: dict) -> Schema:
    original_params = original.parameters or {}
    if all(str(v) == original_params.get(str(k)) for k, v in field_params.items()):
        return original
    params = dict(original_params)
    params.update({str(k): str(v) for k, v in field_params.items()})
    return Schema(original.type, optional=original.optional, default=original.default,
                  name=original.name, version=original.version, doc=original.doc,
                  parameters=params,
                  fields=original.fields() if original.type is Type.STRUCT else None,
                  key_schema=original.key_schema, value_schema=original.value_schema)


def _to_logical(schema: Schema, value: Any) -> Any:
    name = schema.name
    if name is None or value is None or name not in _LOGICAL_NAMES:
        return value
    if name == Decimal.LOGICAL_NAME and schema.type is Type.BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataException(f"Invalid type for Decimal, underlying representation should be "
                                f"bytes but was {type(value).__name__}")
        return Decimal.to_logical(schema, bytes(value))
    logical, underlying, unit = _INTEGER_LOGICAL_TYPES.get(name, (None, None, None))
    if logical is None or schema.type is not underlying:
        return value
    if not isinstance(value, int) or isinstance(value, bool):
        raise DataException(f"Invalid type for {logical.__name__}, underlying representation should be "
                            f"{underlying.name.lower()} but was {type(value).__name__}")
    try:
        return logical.to_logical(schema, value)
    except OverflowError as exc:
        raise DataException(f"{logical.__name__} {value} {unit} from the epoch is out of range") from exc


def _from_logical(schema: Schema, value: Any) -> Any:
    if value is None or logical_type_of(schema) is None:
        return value
    return logical_to_raw(schema, value)


def _pad_to_fixed(unscaled: bytes, size: int) -> bytes:
    if len(unscaled) == size:
        return unscaled
    if len(unscaled) > size:
        raise DataException(f"Unscaled value byte array length {len(unscaled)} is greater than "
                            f"fixed size {size}")
    fill = b"\xff" if unscaled and unscaled[0] & 0x80 else b"\x00"
    return fill * (size - len(unscaled)) + unscaled


def _connect_matches_avro(schema: Schema, node: AvroSchema) -> bool:
    t = schema.type
    k = node.kind
    if t in (Type.INT8, Type.INT16, Type.INT32):
        return k == "int"
    if t is Type.INT64:
        return k == "long"
    if t is Type.FLOAT32:
        return k == "float"
    if t is Type.FLOAT64:
        return k == "double"
    if t is Type.BOOLEAN:
        return k == "boolean"
    if t is Type.STRING:
        return k in ("string", "enum")
    if t is Type.BYTES:
        return k in ("bytes", "fixed")
    if t is Type.ARRAY:
        return k == "array" and not _is_map_entry(node.items)  # type: ignore[arg-type]
    if t is Type.MAP:
        return k == "map" or (k == "array" and _is_map_entry(node.items))  # type: ignore[arg-type]
    if t is Type.STRUCT:
        return k == "record"
    return False


def _default_matches(avro_type: Any, default: Any, ctx: _FromConnectContext) -> bool:
    """Whether a field default is valid for its Avro type (Avro checks the first union branch)."""
    if isinstance(avro_type, list):
        if not avro_type:
            return False
        return _default_matches(avro_type[0], default, ctx)
    if isinstance(avro_type, dict):
        kind = avro_type.get("type")
    else:
        kind = avro_type
    if kind == "null":
        return default is None
    if kind == "boolean":
        return isinstance(default, bool)
    if kind in ("int", "long"):
        return isinstance(default, int) and not isinstance(default, bool)
    if kind in ("float", "double"):
        return (isinstance(default, (int, float)) and not isinstance(default, bool)) or \
            default in ("NaN", "Infinity", "-Infinity")
    if kind in ("string", "bytes", "fixed", "enum"):
        return isinstance(default, str)
    if kind == "array":
        return isinstance(default, list)
    if kind == "map":
        return isinstance(default, dict)
    if kind == "record":
        return isinstance(default, dict)
    # a reference to a named type defined earlier: accept objects and strings
    return default is not None


# ==================================================================================================
# datum resolution (writer schema -> reader schema), for use.latest.version
# ==================================================================================================

_PROMOTIONS = {
    ("int", "long"), ("int", "float"), ("int", "double"), ("long", "float"), ("long", "double"),
    ("float", "double"), ("string", "bytes"), ("bytes", "string"),
}


def _writer_branch(node: AvroSchema, datum: Any, branch_of: dict, flatten: bool) -> tuple[int, Any]:
    if isinstance(datum, Branch):
        return datum.index, datum.value
    if is_connect_union(node, flatten):
        if datum is None:
            return next(i for i, b in enumerate(node.branches) if b.kind == "null"), None
        if isinstance(datum, tuple):
            return branch_of[datum[0]], datum[1]["v"]
        return next(i for i, b in enumerate(node.branches) if b.kind != "null"), datum["v"]
    if datum is None:
        for i, b in enumerate(node.branches):
            if b.kind == "null":
                return i, None
    return next(i for i, b in enumerate(node.branches) if b.kind != "null"), datum


def _same_named(writer: AvroSchema, reader: AvroSchema) -> bool:
    return (writer.name == reader.name or writer.short_name == reader.short_name
            or writer.name in reader.aliases)


def _branch_match(reader: AvroSchema, writer: AvroSchema) -> int | None:
    for i, b in enumerate(reader.branches):  # exact type (and name) first
        if b.kind == writer.kind and (b.kind not in NAMED or _same_named(writer, b)):
            return i
    for i, b in enumerate(reader.branches):
        if (writer.kind, b.kind) in _PROMOTIONS:
            return i
    return None


def resolve_datum(writer: AvroSchema, reader: AvroSchema, datum: Any, branch_of: dict,
                  flatten_singleton_unions: bool = True) -> Any:
    """Project a datum read with ``writer`` onto ``reader`` (Avro schema resolution rules).

    Union values in the result are :class:`Branch` objects for Connect unions.
    """
    if writer.kind == "union":
        index, datum = _writer_branch(writer, datum, branch_of, flatten_singleton_unions)
        writer = writer.branches[index]
    if reader.kind == "union":
        j = _branch_match(reader, writer)
        if j is None:
            raise DataException(f"Cannot read a {writer.type_name()} value with the reader union "
                                f"{[b.type_name() for b in reader.branches]}")
        value = resolve_datum(writer, reader.branches[j], datum, branch_of, flatten_singleton_unions)
        if is_connect_union(reader, flatten_singleton_unions):
            return None if reader.branches[j].kind == "null" else Branch(j, value)
        return value
    wk, rk = writer.kind, reader.kind
    if wk != rk:
        if (wk, rk) not in _PROMOTIONS:
            raise DataException(f"Cannot read a {wk} value as {rk}")
        if rk in ("float", "double"):
            return float(datum)
        if rk == "long":
            return int(datum)
        if rk == "bytes":
            return datum.encode("utf-8")
        if rk == "string":
            return bytes(datum).decode("utf-8")
    if rk == "record":
        out = {}
        for rf in reader.fields:
            wf = writer.field(rf.name)
            if wf is None:
                for alias in rf.aliases:
                    wf = writer.field(alias)
                    if wf is not None:
                        break
            if wf is not None:
                out[rf.name] = resolve_datum(wf.schema, rf.schema, datum.get(wf.name), branch_of,
                                             flatten_singleton_unions)
            elif rf.has_default:
                out[rf.name] = default_datum(rf.schema, rf.default, flatten_singleton_unions)
            else:
                raise DataException(f"Reader field {reader.name}.{rf.name} is not in the writer "
                                    f"schema and has no default")
        return out
    if rk == "enum":
        if datum in reader.symbols:
            return datum
        if reader.enum_default is not None:
            return reader.enum_default
        raise DataException(f"Enum symbol {datum!r} is not in the reader enum {reader.name}")
    if rk == "fixed":
        if writer.size != reader.size:
            raise DataException(f"Fixed sizes differ: {writer.size} vs {reader.size}")
        return datum
    if rk == "array":
        return [resolve_datum(writer.items, reader.items, e, branch_of, flatten_singleton_unions)  # type: ignore[arg-type]
                for e in datum]
    if rk == "map":
        return {k: resolve_datum(writer.values, reader.values, v, branch_of,  # type: ignore[arg-type]
                                 flatten_singleton_unions) for k, v in datum.items()}
    return datum


def default_datum(node: AvroSchema, value: Any, flatten_singleton_unions: bool = True) -> Any:
    """The datum for an Avro JSON default value."""
    k = node.kind
    if k == "union":
        first = node.branches[0]
        if first.kind == "null":
            return None
        inner = default_datum(first, value, flatten_singleton_unions)
        return Branch(0, inner) if is_connect_union(node, flatten_singleton_unions) else inner
    if value is None:
        return None
    if k in ("bytes", "fixed"):
        return value.encode("latin-1")
    if k in ("float", "double"):
        return float(value)
    if k == "record":
        out = {}
        for f in node.fields:
            if f.name in value:
                out[f.name] = default_datum(f.schema, value[f.name], flatten_singleton_unions)
            elif f.has_default:
                out[f.name] = default_datum(f.schema, f.default, flatten_singleton_unions)
            else:
                raise DataException(f"Default for record {node.name} lacks field {f.name}")
        return out
    if k == "array":
        return [default_datum(node.items, e, flatten_singleton_unions) for e in value]  # type: ignore[arg-type]
    if k == "map":
        return {mk: default_datum(node.values, mv, flatten_singleton_unions)  # type: ignore[arg-type]
                for mk, mv in value.items()}
    return value


__all__ = [
    "AvroData", "AvroSchema", "AvroField", "CompiledSchema", "Branch", "parse_schema",
    "compile_schema", "is_connect_union", "resolve_datum", "default_datum", "do_scrub_name",
    "ANYTHING_SCHEMA_JSON", "unscaled_to_bytes",
]
