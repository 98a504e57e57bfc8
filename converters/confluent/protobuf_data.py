"""Protobuf descriptors and messages <-> Connect schemas and values, as Confluent's ``ProtobufData``.

Mapping (defaults; Protobuf -> Connect):

================================================ ===============================================
int32 / sint32 / sfixed32                        INT32 (INT8/INT16 with field option
                                                 ``(confluent.field_meta).params["connect.type"]``)
uint32 / fixed32 / int64 / uint64 / sint64 /     INT64 (a uint64 above 2^63-1 wraps negative,
fixed64 / sfixed64                               as Java's long does)
float / double / bool / string / bytes           FLOAT32 / FLOAT64 / BOOLEAN / STRING / BYTES
enum                                             STRING named after the enum, parameters
                                                 ``io.confluent.connect.protobuf.Enum`` = name and
                                                 ``...Enum.<SYMBOL>`` = number (INT32 with
                                                 ``int.for.enums``)
message                                          STRUCT named after the message (short name;
                                                 full name with ``enhanced.protobuf.schema.support``)
``google.protobuf.Timestamp``                    Timestamp
``google.type.Date`` / ``google.type.TimeOfDay`` Date / Time
``confluent.type.Decimal``                       Decimal (scale/precision from the field's
                                                 ``confluent.field_meta`` params)
``google.protobuf.*Value`` wrappers              STRUCT with a ``value`` field, or an optional
                                                 primitive with ``wrapper.for.nullables``; a
                                                 top-level wrapper message is the primitive
                                                 (``wrapper.for.raw.primitives``, default true)
repeated T                                       ARRAY of optional T
map<K, V>                                        MAP(K, V) named after the map field
oneof ``o``                                      optional STRUCT ``io.confluent.connect.protobuf.Union.o``
                                                 in field ``o_<index>`` (``generate.index.for.unions``),
                                                 placed before the other fields
================================================ ===============================================

Every field schema is optional (``optional.for.nullables=false``,
``wrapper.for.nullables=false``) and carries its field number in the
``io.confluent.connect.protobuf.Tag`` parameter. Scalars that are not
``optional`` always have a value (proto3 defaults), message fields and
``optional`` scalars are null when unset.

:func:`build_pool` assembles a ``DescriptorPool`` from a registry schema
(``format=serialized``), its references and the well-known files
(``google/protobuf/*``, ``google/type/date.proto``, ``google/type/timeofday.proto``,
``confluent/meta.proto``, ``confluent/type/decimal.proto``), so no ``.proto``
parser or ``protoc`` is needed.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import re
from typing import Any, Iterable, Mapping

from connector.api.config_def import ConfigDef
from connector.api.errors import DataException
from connector.api.logical import Date, Decimal, Time, Timestamp, unscaled_to_bytes
from connector.api.schema import Field, Schema, SchemaBuilder, Type
from connector.api.struct import Struct
from converters.confluent.connect_names import (
    CONNECT_DECIMAL_PRECISION_PROP,
    CONNECT_TYPE_PROP,
    DEFAULT_SCHEMA_NAME,
    GENERALIZED_TYPE_UNION,
    KEY_FIELD,
    VALUE_FIELD,
)
from converters.confluent.connect_schemas import present
from converters.confluent.connect_values import SCALAR_TYPES, checked_scalar, field_value
from converters.confluent.data_config import flag, keyword_arguments
from converters.confluent.sum_types import enum_parameter, enum_symbols, is_enum, is_generalized_union
from converters.confluent.wire_format import encode_unsigned_varint

NAMESPACE = "io.confluent.connect.protobuf"
MAP_ENTRY_SUFFIX = "Entry"
PROTOBUF_TYPE_ENUM = NAMESPACE + ".Enum"
PROTOBUF_TYPE_UNION = NAMESPACE + ".Union"
PROTOBUF_TYPE_UNION_PREFIX = PROTOBUF_TYPE_UNION + "."
PROTOBUF_TYPE_TAG = NAMESPACE + ".Tag"
PROTOBUF_TYPE_PROP = NAMESPACE + ".Type"
PROTOBUF_TYPE_WRAPPER = NAMESPACE + ".Wrapper"
PROTOBUF_PRECISION_PROP = "precision"
PROTOBUF_SCALE_PROP = "scale"

DECIMAL_TYPE = "confluent.type.Decimal"
DATE_TYPE = "google.type.Date"
TIME_TYPE = "google.type.TimeOfDay"
TIMESTAMP_TYPE = "google.protobuf.Timestamp"
DECIMAL_LOCATION = "confluent/type/decimal.proto"
META_LOCATION = "confluent/meta.proto"
DATE_LOCATION = "google/type/date.proto"
TIME_LOCATION = "google/type/timeofday.proto"
TIMESTAMP_LOCATION = "google/protobuf/timestamp.proto"
WRAPPER_LOCATION = "google/protobuf/wrappers.proto"
META_EXTENSION_NUMBER = 1088

WRAPPER_TYPES = {
    "google.protobuf.DoubleValue": Type.FLOAT64,
    "google.protobuf.FloatValue": Type.FLOAT32,
    "google.protobuf.Int64Value": Type.INT64,
    "google.protobuf.UInt64Value": Type.INT64,
    "google.protobuf.Int32Value": Type.INT32,
    "google.protobuf.UInt32Value": Type.INT64,
    "google.protobuf.BoolValue": Type.BOOLEAN,
    "google.protobuf.StringValue": Type.STRING,
    "google.protobuf.BytesValue": Type.BYTES,
}

_MS_PER_DAY = 86_400_000


# ==================================================================================================
# descriptors: built-in files and pools
# ==================================================================================================

_BUILTINS: list = []


def _field_of(schema: Schema, name: str) -> Field:
    return present(schema.field(name), f"field {name}")


def builtin_file_descriptors() -> list:
    """``FileDescriptorProto`` s of confluent/meta.proto, confluent/type/decimal.proto,
    google/type/date.proto and google/type/timeofday.proto (built here: no extra package needed)."""
    if _BUILTINS:
        return list(_BUILTINS)
    from google.protobuf import descriptor_pb2

    F = descriptor_pb2.FieldDescriptorProto

    def field(msg: Any, name: str, number: int, type_: int, label: int = F.LABEL_OPTIONAL,
              type_name: str | None = None) -> Any:
        f = msg.field.add(name=name, number=number, type=type_, label=label)
        if type_name:
            f.type_name = type_name
        f.json_name = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)
        return f

    meta = descriptor_pb2.FileDescriptorProto(name=META_LOCATION, package="confluent",
                                              syntax="proto3")
    meta.dependency.append("google/protobuf/descriptor.proto")
    m = meta.message_type.add(name="Meta")
    field(m, "doc", 1, F.TYPE_STRING)
    field(m, "params", 2, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".confluent.Meta.ParamsEntry")
    field(m, "tags", 3, F.TYPE_STRING, F.LABEL_REPEATED)
    field(m, "rules", 4, F.TYPE_MESSAGE, F.LABEL_REPEATED, ".confluent.Rule")
    entry = m.nested_type.add(name="ParamsEntry")
    entry.options.map_entry = True
    field(entry, "key", 1, F.TYPE_STRING)
    field(entry, "value", 2, F.TYPE_STRING)
    r = meta.message_type.add(name="Rule")
    for i, n in enumerate(("name", "doc", "expr", "sql"), 1):
        field(r, n, i, F.TYPE_STRING)
    for ext_name, extendee in (("file_meta", "FileOptions"), ("message_meta", "MessageOptions"),
                               ("field_meta", "FieldOptions"), ("enum_meta", "EnumOptions"),
                               ("enum_value_meta", "EnumValueOptions")):
        ext = meta.extension.add(name=ext_name, number=META_EXTENSION_NUMBER, type=F.TYPE_MESSAGE,
                                 label=F.LABEL_OPTIONAL, type_name=".confluent.Meta")
        ext.extendee = f".google.protobuf.{extendee}"
        ext.json_name = re.sub(r"_([a-z])", lambda mm: mm.group(1).upper(), ext_name)

    dec = descriptor_pb2.FileDescriptorProto(name=DECIMAL_LOCATION, package="confluent.type",
                                             syntax="proto3")
    d = dec.message_type.add(name="Decimal")
    field(d, "value", 1, F.TYPE_BYTES)
    field(d, "precision", 2, F.TYPE_UINT32)
    field(d, "scale", 3, F.TYPE_INT32)

    date = descriptor_pb2.FileDescriptorProto(name=DATE_LOCATION, package="google.type",
                                              syntax="proto3")
    dm = date.message_type.add(name="Date")
    for i, n in enumerate(("year", "month", "day"), 1):
        field(dm, n, i, F.TYPE_INT32)

    tod = descriptor_pb2.FileDescriptorProto(name=TIME_LOCATION, package="google.type",
                                             syntax="proto3")
    tm = tod.message_type.add(name="TimeOfDay")
    for i, n in enumerate(("hours", "minutes", "seconds", "nanos"), 1):
        field(tm, n, i, F.TYPE_INT32)

    _BUILTINS.extend([meta, dec, date, tod])
    return list(_BUILTINS)


def _runtime_well_known() -> list:
    from google.protobuf import (
        any_pb2,
        api_pb2,
        descriptor_pb2,
        duration_pb2,
        empty_pb2,
        field_mask_pb2,
        source_context_pb2,
        struct_pb2,
        timestamp_pb2,
        type_pb2,
        wrappers_pb2,
    )

    out = []
    for module in (descriptor_pb2, any_pb2, source_context_pb2, type_pb2, api_pb2, duration_pb2,
                   empty_pb2, field_mask_pb2, struct_pb2, timestamp_pb2, wrappers_pb2):
        out.append(descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb))
    return out


_WELL_KNOWN: list = []


def well_known_files() -> list:
    """All files a schema may import without a registry reference, dependencies first."""
    if not _WELL_KNOWN:
        _WELL_KNOWN.extend(_runtime_well_known() + builtin_file_descriptors())
    return _WELL_KNOWN


def build_pool(main: Any, dependencies: Mapping[str, Any], main_name: str = "schema.proto"
               ) -> tuple[Any, str]:
    """A ``DescriptorPool`` holding ``main`` (a FileDescriptorProto), its dependencies (by import
    name, dependencies first) and the well-known files; returns ``(pool, main file name)``."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    for fdp in well_known_files():
        pool.Add(fdp)
        added.add(fdp.name)
    try:
        for name, dep in dependencies.items():
            if name in added:
                continue  # a well-known file: the built-in one wins
            copy = descriptor_pb2.FileDescriptorProto()
            copy.CopyFrom(dep)
            copy.name = name
            pool.Add(copy)
            added.add(name)
        if main.name in added and main.name in {f.name for f in well_known_files()}:
            return pool, main.name  # the schema is a well-known file (a top-level wrapper type)
        root = descriptor_pb2.FileDescriptorProto()
        root.CopyFrom(main)
        name = main_name
        while name in added:
            name = "_" + name
        root.name = name
        pool.Add(root)
    except Exception as exc:  # TypeError from upb on a bad descriptor
        raise DataException(f"The Protobuf schema does not build: {exc}") from exc
    return pool, name


def message_name_for_indexes(fdp: Any, indexes: Iterable[int]) -> str:
    """The full name of the message at ``indexes`` (top-level index, then nested indexes)."""
    path = list(indexes)
    if not path:
        path = [0]
    messages = fdp.message_type
    names: list[str] = []
    for depth, index in enumerate(path):
        if index < 0 or index >= len(messages):
            where = "top-level message(s)" if depth == 0 else "nested message(s)"
            raise DataException(f"Invalid message indexes {path}: index {index} is out of range, "
                                f"the schema has {len(messages)} {where} there")
        msg = messages[index]
        names.append(msg.name)
        messages = msg.nested_type
    return ".".join(([fdp.package] if fdp.package else []) + names)


def message_indexes_of(descriptor: Any) -> list[int]:
    """The message indexes of a message descriptor within its file."""
    path: list[int] = []
    current = descriptor
    while current.containing_type is not None:
        parent = current.containing_type
        path.insert(0, [n.full_name for n in parent.nested_types].index(current.full_name))
        current = parent
    from google.protobuf import descriptor_pb2

    file_proto = descriptor_pb2.FileDescriptorProto()
    current.file.CopyToProto(file_proto)
    path.insert(0, [m.name for m in file_proto.message_type].index(current.name))
    return path


# --- field options: (confluent.field_meta) ---

_META_CLASS: list = []


def _meta_class() -> Any:
    if not _META_CLASS:
        from google.protobuf import descriptor_pool, message_factory

        pool = descriptor_pool.DescriptorPool()
        for fdp in well_known_files():
            pool.Add(fdp)
        _META_CLASS.append(message_factory.GetMessageClass(
            pool.FindMessageTypeByName("confluent.Meta")))
    return _META_CLASS[0]


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def meta_params(options_bytes: bytes) -> dict[str, str]:
    """``(confluent.field_meta).params`` from serialized options (unknown extension 1088)."""
    if not options_bytes:
        return {}
    pos = 0
    found: bytes | None = None
    try:
        while pos < len(options_bytes):
            key, pos = _read_varint(options_bytes, pos)
            number, wire = key >> 3, key & 7
            if wire == 0:
                _, pos = _read_varint(options_bytes, pos)
            elif wire == 1:
                pos += 8
            elif wire == 5:
                pos += 4
            elif wire == 2:
                length, pos = _read_varint(options_bytes, pos)
                if number == META_EXTENSION_NUMBER:
                    found = (found or b"") + options_bytes[pos:pos + length]
                pos += length
            else:
                break
    except IndexError:
        return {}
    if found is None:
        return {}
    from google.protobuf.message import DecodeError

    try:
        return dict(_meta_class().FromString(found).params)
    except DecodeError:
        return {}


def meta_option_bytes(params: Mapping[str, str]) -> bytes:
    """Serialized ``FieldOptions`` bytes carrying ``(confluent.field_meta).params``."""
    if not params:
        return b""
    meta = _meta_class()()
    for k, v in params.items():
        meta.params[k] = v
    payload = meta.SerializeToString()
    key = (META_EXTENSION_NUMBER << 3) | 2
    return encode_unsigned_varint(key) + encode_unsigned_varint(len(payload)) + payload


# ==================================================================================================
# ProtobufData
# ==================================================================================================

_PROTOBUF_FLAGS = (
    ("enhanced.protobuf.schema.support", False, "message, enum and union names are full names"),
    ("int.for.enums", False, "enums read as INT32 instead of STRING"),
    ("optional.for.nullables", False, "only fields with the `optional` keyword are optional"),
    ("optional.for.proto2", True, "proto2 `optional` fields are optional (null when unset)"),
    ("wrapper.for.nullables", False, "`google.protobuf.*Value` wrappers read as optional primitives"),
    ("wrapper.for.raw.primitives", True, "a top-level wrapper message reads as its primitive"),
    ("generate.struct.for.nulls", False, "unset message fields read as structs of defaults instead of null"),
    ("generate.index.for.unions", True, "a `oneof o` is the field `o_0`, `o_1`, ... by index (else `o`)"),
    ("flatten.unions", False, "`oneof` members become optional top-level fields"),
    ("generalized.sum.type.support", False,
     "unions and enums as `connect_union_*` / `org.apache.kafka.connect.data.Enum`"),
    ("scrub.invalid.names", False, "writing: invalid Protobuf names are rewritten"),
    ("ignore.default.for.nullables", False, "writing: a null field is not replaced by its default"),
)

#: Confluent's ``ProtobufDataConfig``: every key is a flag.
PROTOBUF_DATA_CONFIG = ConfigDef(flag(name, default, "low", doc) for name, default, doc in _PROTOBUF_FLAGS)


class _FieldInfo:
    """What the converter needs of a field descriptor (cached per descriptor)."""

    __slots__ = ("fd", "name", "number", "type", "repeated", "proto3_optional", "proto2_optional",
                 "meta", "is_map", "message_name", "in_real_oneof")

    def __init__(self, fd: Any, proto: Any, proto2: bool, real_oneof: bool):
        self.fd = fd
        self.name = fd.name
        self.number = fd.number
        self.type = fd.type
        self.repeated = fd.is_repeated
        self.proto3_optional = bool(proto.proto3_optional)
        self.proto2_optional = proto2 and not fd.is_repeated and not fd.is_required \
            and fd.containing_oneof is None
        self.meta = meta_params(proto.options.SerializeToString()) if proto.HasField("options") else {}
        self.message_name = fd.message_type.full_name if fd.message_type is not None else None
        self.is_map = False
        if self.repeated and fd.message_type is not None:
            mt = fd.message_type
            fields = mt.fields
            self.is_map = (mt.name.endswith(MAP_ENTRY_SUFFIX) and len(fields) == 2
                           and fields[0].name == KEY_FIELD and fields[1].name == VALUE_FIELD
                           and not fields[0].is_repeated and not fields[1].is_repeated)
        self.in_real_oneof = real_oneof


class ProtobufData:
    """Converts between Protobuf (descriptors, messages) and Connect (schemas, values)."""

    def __init__(self, *, enhanced_protobuf_schema_support: bool = False,
                 scrub_invalid_names: bool = False, int_for_enums: bool = False,
                 optional_for_nullables: bool = False, optional_for_proto2: bool = True,
                 wrapper_for_nullables: bool = False, wrapper_for_raw_primitives: bool = True,
                 generate_struct_for_nulls: bool = False, generate_index_for_unions: bool = True,
                 flatten_unions: bool = False, generalized_sum_type_support: bool = False,
                 ignore_default_for_nullables: bool = False):
        self.enhanced = enhanced_protobuf_schema_support
        self.scrub = scrub_invalid_names
        self.int_for_enums = int_for_enums
        self.optional_for_nullables = optional_for_nullables
        self.optional_for_proto2 = optional_for_proto2
        self.wrapper_for_nullables = wrapper_for_nullables
        self.wrapper_for_raw_primitives = wrapper_for_raw_primitives
        self.generate_struct_for_nulls = generate_struct_for_nulls
        self.generate_index_for_unions = generate_index_for_unions
        self.flatten_unions = flatten_unions
        self.generalized = generalized_sum_type_support
        self.ignore_default_for_nullables = ignore_default_for_nullables
        self._infos: dict[Any, list[_FieldInfo]] = {}
        self._plans: dict[int, Any] = {}

    @classmethod
    def from_config(cls, values: Mapping[str, Any]) -> "ProtobufData":
        """From parsed ``PROTOBUF_DATA_CONFIG`` values."""
        return cls(**keyword_arguments(PROTOBUF_DATA_CONFIG, values))

    # ---------------------------------------------------------------------------------------------
    # descriptor helpers
    # ---------------------------------------------------------------------------------------------

    def field_infos(self, descriptor: Any) -> list[_FieldInfo]:
        infos = self._infos.get(descriptor)
        if infos is not None:
            return infos
        from google.protobuf import descriptor_pb2

        proto = descriptor_pb2.DescriptorProto()
        descriptor.CopyToProto(proto)
        file_proto = descriptor_pb2.FileDescriptorProto()
        descriptor.file.CopyToProto(file_proto)
        proto2 = file_proto.syntax in ("", "proto2")
        by_number = {f.number: f for f in proto.field}
        real = self._real_oneof_names(descriptor, by_number)
        infos = []
        for fd in descriptor.fields:
            p = by_number[fd.number]
            in_real = fd.containing_oneof is not None and fd.containing_oneof.name in real
            infos.append(_FieldInfo(fd, p, proto2, in_real))
        self._infos[descriptor] = infos
        return infos

    @staticmethod
    def _real_oneof_names(descriptor: Any, by_number: dict) -> list[str]:
        names = []
        for oneof in descriptor.oneofs:
            fields = oneof.fields
            synthetic = len(fields) == 1 and by_number[fields[0].number].proto3_optional
            if not synthetic:
                names.append(oneof.name)
        return names

    def real_oneofs(self, descriptor: Any) -> list[Any]:
        infos = {i.number: i for i in self.field_infos(descriptor)}
        return [o for o in descriptor.oneofs
                if not (len(o.fields) == 1 and infos[o.fields[0].number].proto3_optional)]

    def union_field_name(self, oneof: Any) -> str:
        """The Connect field a ``oneof`` becomes (unless ``flatten.unions``)."""
        name = oneof.name
        if self.generate_index_for_unions:
            name += f"_{oneof.index}"
        return name

    def _is_optional(self, info: _FieldInfo) -> bool:
        return info.proto3_optional or (self.optional_for_proto2 and info.proto2_optional)

    def reads_presence(self, info: _FieldInfo) -> bool:
        """Whether a field outside a oneof is null when unset (else it always has a value, maybe the default)."""
        primitive_or_repeated = info.type not in (11, 10) or info.repeated  # MESSAGE/GROUP
        return not self.generate_struct_for_nulls and not (primitive_or_repeated and not self._is_optional(info))

    def _has_optional_keyword(self, info: _FieldInfo) -> bool:
        return info.proto3_optional or info.proto2_optional

    # ---------------------------------------------------------------------------------------------
    # descriptor -> Connect schema
    # ---------------------------------------------------------------------------------------------

    def to_connect_schema(self, descriptor: Any, version: int | None = None) -> Schema:
        builder = None
        if self.wrapper_for_raw_primitives and descriptor.full_name in WRAPPER_TYPES:
            builder = SchemaBuilder(WRAPPER_TYPES[descriptor.full_name])
        if builder is None:
            builder = self._message_builder(descriptor, ())
        if version is not None:
            builder.version(version)
        return builder.build()

    def _message_builder(self, descriptor: Any, stack: tuple) -> SchemaBuilder:
        if descriptor.full_name in stack:
            raise DataException(f"Recursive Protobuf message {descriptor.full_name} is not "
                                f"supported: Connect schemas cannot refer to themselves")
        stack = stack + (descriptor.full_name,)
        builder = SchemaBuilder.struct()
        builder.name(descriptor.full_name if self.enhanced else descriptor.name)
        infos = {i.number: i for i in self.field_infos(descriptor)}
        for oneof in self.real_oneofs(descriptor):
            if self.flatten_unions:
                for fd in oneof.fields:
                    builder.field(fd.name, self._field_schema(infos[fd.number], True, stack))
            else:
                builder.field(self.union_field_name(oneof), self._oneof_schema(oneof, infos, stack))
        for info in self.field_infos(descriptor):
            if info.in_real_oneof:
                continue
            builder.field(info.name, self._field_schema(info, False, stack))
        return builder

    def _oneof_schema(self, oneof: Any, infos: dict, stack: tuple) -> Schema:
        builder = SchemaBuilder.struct()
        if self.generalized:
            builder.name(oneof.name)
            builder.parameter(GENERALIZED_TYPE_UNION, oneof.name)
        else:
            builder.name(PROTOBUF_TYPE_UNION_PREFIX + (oneof.full_name if self.enhanced
                                                       else oneof.name))
        for fd in oneof.fields:
            builder.field(fd.name, self._field_schema(infos[fd.number], True, stack))
        builder.optional()
        return builder.build()

    def _field_schema(self, info: _FieldInfo, oneof_member: bool, stack: tuple) -> Schema:
        from google.protobuf.descriptor import FieldDescriptor

        fd = info.fd
        t = info.type
        builder: SchemaBuilder
        if t in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32):
            connect_type = info.meta.get(CONNECT_TYPE_PROP)
            if connect_type == "int8":
                builder = SchemaBuilder.int8()
            elif connect_type == "int16":
                builder = SchemaBuilder.int16()
            else:
                builder = SchemaBuilder.int32()
                if t != FieldDescriptor.TYPE_INT32:
                    builder.parameter(PROTOBUF_TYPE_PROP, _TYPE_NAMES[t])
        elif t in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_INT64,
                   FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_FIXED64,
                   FieldDescriptor.TYPE_SFIXED64):
            builder = SchemaBuilder.int64()
            if t != FieldDescriptor.TYPE_INT64:
                builder.parameter(PROTOBUF_TYPE_PROP, _TYPE_NAMES[t])
        elif t == FieldDescriptor.TYPE_FLOAT:
            builder = SchemaBuilder.float32()
        elif t == FieldDescriptor.TYPE_DOUBLE:
            builder = SchemaBuilder.float64()
        elif t == FieldDescriptor.TYPE_BOOL:
            builder = SchemaBuilder.bool()
        elif t == FieldDescriptor.TYPE_STRING:
            builder = SchemaBuilder.string()
        elif t == FieldDescriptor.TYPE_BYTES:
            builder = SchemaBuilder.bytes()
        elif t == FieldDescriptor.TYPE_ENUM:
            enum = fd.enum_type
            builder = SchemaBuilder.int32() if self.int_for_enums else SchemaBuilder.string()
            builder.name(enum.full_name if self.enhanced else enum.name)
            param = enum_parameter(self.generalized, PROTOBUF_TYPE_ENUM)
            builder.parameter(param, enum.name)
            for value in enum.values:
                builder.parameter(f"{param}.{value.name}", str(value.number))
            builder.optional()
        elif t in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
            full = info.message_name
            if full == DECIMAL_TYPE:
                scale = _int_or(info.meta.get(PROTOBUF_SCALE_PROP), 0)
                builder = Decimal.builder(scale)
                precision = _int_or(info.meta.get(PROTOBUF_PRECISION_PROP), None)
                if precision is not None:
                    builder.parameter(CONNECT_DECIMAL_PRECISION_PROP, str(precision))
            elif full == DATE_TYPE:
                builder = Date.builder()
            elif full == TIME_TYPE:
                builder = Time.builder()
            elif full == TIMESTAMP_TYPE:
                builder = Timestamp.builder()
            elif self.wrapper_for_nullables and full in WRAPPER_TYPES:
                builder = SchemaBuilder(WRAPPER_TYPES[full])
            elif info.is_map:
                entry = fd.message_type
                entry_infos = self.field_infos(entry)
                builder = SchemaBuilder.map(self._field_schema(entry_infos[0], False, stack),
                                            self._field_schema(entry_infos[1], False, stack))
                builder.name(to_map_field(entry.full_name if self.enhanced else entry.name))
            else:
                builder = self._message_builder(fd.message_type, stack)
            builder.optional()
        else:
            raise DataException(f"Unknown Connect schema type: {t}")

        if info.repeated and builder.type is not Type.MAP:
            element = builder.optional().build()
            builder = SchemaBuilder.array(element)
            builder.optional()
        if oneof_member:
            builder.optional()
            if self.wrapper_for_nullables and info.message_name in WRAPPER_TYPES:
                builder.parameter(PROTOBUF_TYPE_WRAPPER, "true")
        elif self.optional_for_nullables:
            if self._has_optional_keyword(info):
                builder.optional()
        elif not self.wrapper_for_nullables:
            builder.optional()
        builder.parameter(PROTOBUF_TYPE_TAG, str(info.number))
        return builder.build()

    # ---------------------------------------------------------------------------------------------
    # message -> Connect value
    # ---------------------------------------------------------------------------------------------

    def to_connect_value(self, schema: Schema, message: Any) -> Any:
        if message is None:
            return None
        if schema.type is not Type.STRUCT:  # a top-level wrapper read as a primitive
            return self._value(schema, message, None)
        return self._struct(schema, message)

    def _struct(self, schema: Schema, message: Any) -> Struct:
        descriptor = message.DESCRIPTOR
        struct = Struct(schema)
        for oneof in self.real_oneofs(descriptor):
            set_name = message.WhichOneof(oneof.name)
            if set_name is None:
                continue
            fd = descriptor.fields_by_name[set_name]
            info = next(i for i in self.field_infos(descriptor) if i.number == fd.number)
            raw = getattr(message, set_name)
            if self.flatten_unions:
                field = _field_of(schema, set_name)
                struct.put(field, self._value(field.schema, raw, info))
            else:
                union_field = _field_of(schema, self.union_field_name(oneof))
                union_schema = union_field.schema
                member = _field_of(union_schema, set_name)
                union = Struct(union_schema).put(member, self._value(member.schema, raw, info))
                struct.put(union_field, union)
        for info in self.field_infos(descriptor):
            if info.in_real_oneof:
                continue
            if not self.reads_presence(info) or message.HasField(info.name):
                field = _field_of(schema, info.name)
                value = self._value(field.schema, getattr(message, info.name), info)
                if value is not None:
                    struct.put(field, value)
        return struct

    def _value(self, schema: Schema, value: Any, info: _FieldInfo | None) -> Any:
        if value is None:
            return None
        name = schema.name
        if name is not None:
            if name == Decimal.LOGICAL_NAME and schema.type is Type.BYTES:
                return _decimal_from_message(value)
            if name == Date.LOGICAL_NAME and schema.type is Type.INT32:
                try:
                    return _dt.date(value.year, value.month, value.day)
                except ValueError as exc:
                    raise DataException(f"Invalid google.type.Date {value.year}-{value.month}-"
                                        f"{value.day}: {exc}") from exc
            if name == Time.LOGICAL_NAME and schema.type is Type.INT32:
                if not (0 <= value.hours < 24 and 0 <= value.minutes < 60
                        and 0 <= value.seconds < 60 and 0 <= value.nanos < 1_000_000_000):
                    raise DataException(f"Invalid google.type.TimeOfDay {value.hours}:"
                                        f"{value.minutes}:{value.seconds}.{value.nanos}")
                millis = ((value.hours * 60 + value.minutes) * 60 + value.seconds) * 1000 \
                    + value.nanos // 1_000_000
                return Time.to_logical(schema, millis)
            if name == Timestamp.LOGICAL_NAME and schema.type is Type.INT64:
                millis = value.seconds * 1000 + int(value.nanos / 1_000_000)
                try:
                    return Timestamp.to_logical(schema, millis)
                except OverflowError as exc:
                    raise DataException(f"Timestamp {value.seconds}s is out of range") from exc
        t = schema.type
        if t is Type.ARRAY:
            element = present(schema.value_schema, "array element schema")
            if info is not None and info.repeated:
                return [self._scalar_or_message(element, e, info) for e in value]
            return [self._value(element, e, None) for e in value]
        if t is Type.MAP:
            ks = present(schema.key_schema, "map key schema")
            vs = present(schema.value_schema, "map value schema")
            entry_infos = self.field_infos(info.fd.message_type) if info is not None else [None, None]
            return {self._value(ks, k, entry_infos[0]): self._value(vs, v, entry_infos[1])
                    for k, v in value.items()}
        return self._scalar_or_message(schema, value, info)

    def _scalar_or_message(self, schema: Schema, value: Any, info: _FieldInfo | None) -> Any:
        name = schema.name
        if name is not None and name in (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME,
                                         Timestamp.LOGICAL_NAME):
            return self._value(schema, value, None)
        t = schema.type
        if t is Type.STRUCT:
            return self._struct(schema, value)
        if hasattr(value, "DESCRIPTOR") and t is not Type.STRUCT:  # a wrapper message
            value = value.value
        if t in (Type.INT8, Type.INT16, Type.INT32):
            if info is not None and info.type == 14 and not self.int_for_enums:  # enum as string
                return self._enum_name(info, value)
            bits = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32}[t]
            return _wrap_signed(int(value), bits)
        if t is Type.INT64:
            return _wrap_signed(int(value), 64)
        if t in (Type.FLOAT32, Type.FLOAT64):
            return float(value)
        if t is Type.BOOLEAN:
            return bool(value)
        if t is Type.STRING:
            if info is not None and info.type == 14:
                return self._enum_name(info, value)
            return str(value)
        if t is Type.BYTES:
            return bytes(value)
        raise DataException(f"Unknown Connect schema type: {t}")

    @staticmethod
    def _enum_name(info: _FieldInfo, number: int) -> str:
        enum = info.fd.enum_type
        v = enum.values_by_number.get(number)
        if v is None:
            return f"UNKNOWN_ENUM_VALUE_{enum.name}_{number}"
        return v.name

    # ---------------------------------------------------------------------------------------------
    # Connect schema -> descriptor
    # ---------------------------------------------------------------------------------------------

    def from_connect_schema(self, schema: Schema) -> tuple[Any, list[int]]:
        """A ``FileDescriptorProto`` for ``schema`` and the message indexes of its message.

        Follows Confluent's ``ProtobufData.fromConnectSchema``: a STRUCT becomes a proto3 message
        (package = the namespace of its name, fields numbered by the ``...Tag`` parameter or in
        order), other top-level types the matching ``google.protobuf`` wrapper message.
        """
        from google.protobuf import descriptor_pb2, wrappers_pb2

        if schema.type is not Type.STRUCT:
            wrapper = {
                Type.INT8: "Int32Value", Type.INT16: "Int32Value", Type.INT32: "Int32Value",
                Type.INT64: "Int64Value", Type.FLOAT32: "FloatValue", Type.FLOAT64: "DoubleValue",
                Type.BOOLEAN: "BoolValue", Type.STRING: "StringValue", Type.BYTES: "BytesValue",
            }.get(schema.type)
            if wrapper is None:
                raise DataException(f"Unsupported root schema of type {schema.type.name}")
            fdp = descriptor_pb2.FileDescriptorProto.FromString(
                wrappers_pb2.DESCRIPTOR.serialized_pb)
            names = [m.name for m in fdp.message_type]
            return fdp, [names.index(wrapper)]
        ctx = _FromConnectCtx()
        full = schema.name if schema.name is not None else self._default_name(ctx)
        namespace, _, short = full.rpartition(".")
        short = self._scrub(short)
        fdp = descriptor_pb2.FileDescriptorProto(name="connect.proto", syntax="proto3")
        if namespace:
            fdp.package = namespace
        message = fdp.message_type.add(name=short)
        scope = f".{namespace}.{short}" if namespace else f".{short}"
        self._message_from_connect(ctx, fdp, message, scope, schema)
        for dep in sorted(ctx.dependencies):
            fdp.dependency.append(dep)
        return fdp, [0]

    def _default_name(self, ctx: "_FromConnectCtx") -> str:
        ctx.name_index += 1
        return DEFAULT_SCHEMA_NAME + (str(ctx.name_index) if ctx.name_index > 1 else "")

    def _scrub(self, name: str) -> str:
        if not self.scrub or not name:
            return name
        from converters.confluent.avro_data import java_url_encode

        ok = all(c.isascii() and (c.isalnum() or c == "_") for c in name) \
            and not name[0].isdigit() and name[0] != "_"
        if ok:
            return name
        encoded = java_url_encode(name)
        if encoded[0].isdigit() or encoded[0] == "_":
            encoded = "x" + encoded
        return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in encoded)

    def _unqualified(self, ctx: "_FromConnectCtx", name: str | None) -> str:
        full = name if name is not None else self._default_name(ctx)
        return self._scrub(full.rsplit(".", 1)[-1])

    def _message_from_connect(self, ctx: "_FromConnectCtx", fdp: Any, message: Any, scope: str,
                              schema: Schema) -> None:
        index = 1
        synthetic: list[Any] = []
        for field in schema.fields():
            fs = field.schema
            tag_text = (fs.parameters or {}).get(PROTOBUF_TYPE_TAG)
            if tag_text is not None:
                tag = int(tag_text)
            else:
                tag = index
                index += 1
            if fs.type is Type.STRUCT and _is_union_schema(fs):
                union_name = (fs.parameters or {}).get(GENERALIZED_TYPE_UNION) if self.generalized \
                    else self._unqualified(ctx, (fs.name or "")[len(PROTOBUF_TYPE_UNION_PREFIX):])
                oneof_index = len(message.oneof_decl)
                message.oneof_decl.add(name=union_name)
                for member in fs.fields():
                    mtag = int((member.schema.parameters or {}).get(PROTOBUF_TYPE_TAG, "0"))
                    f = self._field_from_connect(ctx, fdp, message, scope, member.schema,
                                                 self._scrub(member.name), mtag, True)
                    f.oneof_index = oneof_index
                continue
            f = self._field_from_connect(ctx, fdp, message, scope, fs, self._scrub(field.name), tag,
                                         False)
            if self.optional_for_nullables and fs.optional and fs.type not in (Type.ARRAY, Type.MAP):
                synthetic.append(f)
        for f in synthetic:  # synthetic oneofs come after the real ones
            f.proto3_optional = True
            f.oneof_index = len(message.oneof_decl)
            message.oneof_decl.add(name="_" + f.name)

    def _field_from_connect(self, ctx: "_FromConnectCtx", fdp: Any, message: Any, scope: str,
                            fs: Schema, name: str, tag: int, oneof_member: bool) -> Any:
        from google.protobuf import descriptor_pb2

        F = descriptor_pb2.FieldDescriptorProto
        label = F.LABEL_OPTIONAL
        if fs.type in (Type.ARRAY, Type.MAP):
            label = F.LABEL_REPEATED
        element = fs.value_schema if fs.type is Type.ARRAY else fs
        if element.type is Type.ARRAY:  # type: ignore[union-attr]
            raise DataException("Array cannot be nested")
        f = message.field.add(name=name, number=tag, label=label)
        f.json_name = _json_name(name)
        params: dict[str, str] = {}
        self._set_type(ctx, fdp, message, scope, f, element, name, params, oneof_member)  # type: ignore[arg-type]
        if params:
            f.options.MergeFromString(meta_option_bytes(params))
            ctx.dependencies.add(META_LOCATION)
        return f

    def _wrapped(self, schema: Schema, oneof_member: bool) -> bool:
        return self.wrapper_for_nullables and schema.optional and (
            not oneof_member or (schema.parameters or {}).get(PROTOBUF_TYPE_WRAPPER) == "true")

    def _set_type(self, ctx: "_FromConnectCtx", fdp: Any, message: Any, scope: str, f: Any,
                  schema: Schema, field_name: str, params: dict, oneof_member: bool) -> None:
        from google.protobuf import descriptor_pb2

        F = descriptor_pb2.FieldDescriptorProto
        p = schema.parameters or {}

        def message_type(full: str, location: str) -> None:
            f.type = F.TYPE_MESSAGE
            f.type_name = "." + full
            ctx.dependencies.add(location)

        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            if CONNECT_DECIMAL_PRECISION_PROP in p:
                params[PROTOBUF_PRECISION_PROP] = p[CONNECT_DECIMAL_PRECISION_PROP]
            if "scale" in p:
                params[PROTOBUF_SCALE_PROP] = p["scale"]
            return message_type(DECIMAL_TYPE, DECIMAL_LOCATION)
        if name == Date.LOGICAL_NAME:
            return message_type(DATE_TYPE, DATE_LOCATION)
        if name == Time.LOGICAL_NAME:
            return message_type(TIME_TYPE, TIME_LOCATION)
        if name == Timestamp.LOGICAL_NAME:
            return message_type(TIMESTAMP_TYPE, TIMESTAMP_LOCATION)
        t = schema.type
        wrapped = self._wrapped(schema, oneof_member)
        if t in (Type.INT8, Type.INT16, Type.INT32):
            if t is not Type.INT32:
                params[CONNECT_TYPE_PROP] = t.name.lower()
            if t is Type.INT32 and PROTOBUF_TYPE_ENUM in p:
                return self._enum_type(ctx, message, scope, f, schema)
            if wrapped:
                return message_type("google.protobuf.Int32Value", WRAPPER_LOCATION)
            f.type = _TYPE_BY_NAME[p.get(PROTOBUF_TYPE_PROP, "int32")] if t is Type.INT32 \
                else F.TYPE_INT32
            return None
        if t is Type.INT64:
            kind = p.get(PROTOBUF_TYPE_PROP, "int64")
            if wrapped:
                wrapper = {"uint32": "UInt32Value", "fixed32": "UInt32Value",
                           "uint64": "UInt64Value", "fixed64": "UInt64Value"}.get(kind, "Int64Value")
                return message_type("google.protobuf." + wrapper, WRAPPER_LOCATION)
            f.type = _TYPE_BY_NAME[kind]
            return None
        simple = {Type.FLOAT32: (F.TYPE_FLOAT, "FloatValue"), Type.FLOAT64: (F.TYPE_DOUBLE, "DoubleValue"),
                  Type.BOOLEAN: (F.TYPE_BOOL, "BoolValue"), Type.BYTES: (F.TYPE_BYTES, "BytesValue")}
        if t in simple:
            if wrapped:
                return message_type("google.protobuf." + simple[t][1], WRAPPER_LOCATION)
            f.type = simple[t][0]
            return None
        if t is Type.STRING:
            if is_enum(p, PROTOBUF_TYPE_ENUM):
                return self._enum_type(ctx, message, scope, f, schema)
            if wrapped:
                return message_type("google.protobuf.StringValue", WRAPPER_LOCATION)
            f.type = F.TYPE_STRING
            return None
        if t is Type.MAP:
            entry_name = to_map_entry(self._unqualified(ctx, schema.name)) if schema.name \
                else to_map_entry(field_name)
            entry = message.nested_type.add(name=entry_name)
            entry.options.map_entry = True
            entry_scope = f"{scope}.{entry_name}"
            for i, (fname, fschema) in enumerate(((KEY_FIELD, schema.key_schema),
                                                  (VALUE_FIELD, schema.value_schema)), 1):
                ef = entry.field.add(name=fname, number=i, label=F.LABEL_OPTIONAL)
                ef.json_name = fname
                eparams: dict[str, str] = {}
                self._set_type(ctx, fdp, entry, entry_scope, ef, fschema, fname, eparams, False)  # type: ignore[arg-type]
                if eparams:
                    ef.options.MergeFromString(meta_option_bytes(eparams))
                    ctx.dependencies.add(META_LOCATION)
            f.type = F.TYPE_MESSAGE
            f.type_name = entry_scope
            return None
        if t is Type.STRUCT:
            type_name = self._unqualified(ctx, schema.name)
            if type_name == field_name:
                type_name += "Message"
            key = (scope, type_name)
            if key not in ctx.messages:
                ctx.messages.add(key)
                nested = message.nested_type.add(name=type_name)
                self._message_from_connect(ctx, fdp, nested, f"{scope}.{type_name}", schema)
            f.type = F.TYPE_MESSAGE
            f.type_name = f"{scope}.{type_name}"
            return None
        raise DataException(f"Unknown schema type: {t}")

    def _enum_type(self, ctx: "_FromConnectCtx", message: Any, scope: str, f: Any,
                   schema: Schema) -> None:
        from google.protobuf import descriptor_pb2

        F = descriptor_pb2.FieldDescriptorProto
        enum_name = self._unqualified(ctx, schema.name)
        if not any(e.name == enum_name for e in message.enum_type):
            enum = message.enum_type.add(name=enum_name)
            param = enum_parameter(self.generalized, PROTOBUF_TYPE_ENUM)
            values = sorted(((int(v), symbol) for symbol, v
                             in enum_symbols(schema.parameters or {}, param).items()),
                            key=lambda x: (x[0] != 0, x[0]))
            if not values or values[0][0] != 0:
                raise DataException(f"Enum {enum_name} needs a symbol with number 0 (proto3)")
            for number, symbol in values:
                enum.value.add(name=symbol, number=number)
        f.type = F.TYPE_ENUM
        f.type_name = f"{scope}.{enum_name}"

    # ---------------------------------------------------------------------------------------------
    # Connect value -> message
    # ---------------------------------------------------------------------------------------------

    def from_connect_value(self, schema: Schema, value: Any, message_class: Any) -> Any:
        """A message of ``message_class`` holding the Connect ``value`` of ``schema``."""
        if schema.type is not Type.STRUCT:
            raw = _to_raw(schema, value)
            return message_class(value=raw)
        message = message_class()
        self._fill(schema, value, message)
        return message

    def _fill(self, schema: Schema, struct: Any, message: Any) -> None:
        if not isinstance(struct, Struct) or struct.schema != schema:
            raise DataException("Mismatching struct schema")
        descriptor = message.DESCRIPTOR
        for field in schema.fields():
            fs = field.schema
            v = field_value(struct, field, self.ignore_default_for_nullables)
            if v is None:
                continue
            if fs.type is Type.STRUCT and _is_union_schema(fs):
                for member in fs.fields():
                    mv = v.get(member)
                    if mv is not None:
                        name = self._scrub(member.name)
                        self._set(message, descriptor.fields_by_name[name], member.schema, mv)
                        break
                continue
            self._set(message, descriptor.fields_by_name[self._scrub(field.name)], fs, v)

    def _set(self, message: Any, fd: Any, schema: Schema, value: Any) -> None:
        name = fd.name
        if schema.type is Type.ARRAY:
            container = getattr(message, name)
            element = present(schema.value_schema, "array element schema")
            for e in value:
                if e is None:
                    raise DataException(f"Protobuf repeated field {name} cannot hold null")
                if fd.message_type is not None:
                    self._set_message(container.add(), fd.message_type, element, e)
                else:
                    container.append(self._scalar(fd, element, e))
            return
        if schema.type is Type.MAP:
            container = getattr(message, name)
            entry = fd.message_type
            kfd, vfd = entry.fields_by_name[KEY_FIELD], entry.fields_by_name[VALUE_FIELD]
            ks = present(schema.key_schema, "map key schema")
            vs = present(schema.value_schema, "map value schema")
            for k, v in value.items():
                key = self._scalar(kfd, ks, k)
                if vfd.message_type is not None:
                    self._set_message(container[key], vfd.message_type, vs, v)
                elif v is not None:
                    container[key] = self._scalar(vfd, vs, v)
            return
        if fd.message_type is not None:
            self._set_message(getattr(message, name), fd.message_type, schema, value)
            return
        setattr(message, name, self._scalar(fd, schema, value))

    def _set_message(self, target: Any, descriptor: Any, schema: Schema, value: Any) -> None:
        full = descriptor.full_name
        if full == DECIMAL_TYPE:
            raw = Decimal.from_logical(schema, value)
            target.value = raw
            target.scale = Decimal.scale_of(schema)
            precision = (schema.parameters or {}).get(CONNECT_DECIMAL_PRECISION_PROP)
            if precision is not None:
                target.precision = int(precision)
            return
        if full == DATE_TYPE:
            target.year, target.month, target.day = value.year, value.month, value.day
            return
        if full == TIME_TYPE:
            target.hours, target.minutes, target.seconds = value.hour, value.minute, value.second
            target.nanos = (value.microsecond // 1000) * 1_000_000
            return
        if full == TIMESTAMP_TYPE:
            millis = Timestamp.from_logical(schema, value)
            target.seconds, ms = divmod(millis, 1000)
            target.nanos = ms * 1_000_000
            return
        if full in WRAPPER_TYPES and schema.type is not Type.STRUCT:
            target.value = _to_raw(schema, value)
            return
        self._fill(schema, value, target)

    def _scalar(self, fd: Any, schema: Schema, value: Any) -> Any:
        if fd.enum_type is not None:
            if schema.type is Type.INT32:
                return int(value)
            v = fd.enum_type.values_by_name.get(value)
            if v is None:
                raise DataException(f"Enum symbol {value!r} not in {fd.enum_type.full_name}")
            return v.number
        raw = _to_raw(schema, value)
        from google.protobuf.descriptor import FieldDescriptor

        if fd.type in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64) and isinstance(raw, int) and raw < 0:
            raw += 2 ** 64
        return raw


class _FromConnectCtx:
    def __init__(self) -> None:
        self.name_index = 0
        self.dependencies: set[str] = set()
        self.messages: set = set()


# ==================================================================================================
# helpers
# ==================================================================================================

_TYPE_NAMES = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64",
               7: "fixed32", 8: "bool", 9: "string", 12: "bytes", 13: "uint32", 15: "sfixed32",
               16: "sfixed64", 17: "sint32", 18: "sint64"}
_TYPE_BY_NAME = {v: k for k, v in _TYPE_NAMES.items()}


def to_map_field(name: str) -> str:
    """``ProtobufSchema.toMapField``: ``a.b.TagsEntry`` -> ``a.b.tags``."""
    parts = name.split(".")
    last = parts[-1]
    if last.endswith(MAP_ENTRY_SUFFIX):
        last = last[: -len(MAP_ENTRY_SUFFIX)]
        last = re.sub(r"(?<!^)(?=[A-Z])", "_", last).lower()
        parts[-1] = last
    return ".".join(parts)


def to_map_entry(name: str) -> str:
    """``ProtobufSchema.toMapEntry``: ``tags`` -> ``TagsEntry``."""
    if name.endswith(MAP_ENTRY_SUFFIX):
        return name
    if "_" in name or name.islower():
        name = "".join(p[:1].upper() + p[1:] for p in name.split("_") if p)
    else:
        name = name[:1].upper() + name[1:]
    return name + MAP_ENTRY_SUFFIX


def _json_name(name: str) -> str:
    return re.sub(r"_([a-zA-Z0-9])", lambda m: m.group(1).upper(), name)


def _int_or(text: Any, default: Any) -> Any:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


def _wrap_signed(v: int, bits: int) -> int:
    mask = (1 << bits) - 1
    v &= mask
    return v - (1 << bits) if v >> (bits - 1) else v


def _decimal_from_message(message: Any) -> _decimal.Decimal:
    unscaled = int.from_bytes(bytes(message.value), "big", signed=True) if message.value else 0
    scale = int(message.scale)
    result = _decimal.Decimal(unscaled).scaleb(-scale)
    precision = int(message.precision)
    if precision > 0:
        with _decimal.localcontext() as ctx:
            ctx.prec = precision
            ctx.rounding = _decimal.ROUND_HALF_UP
            result = +result
    return result


def _is_union_schema(schema: Schema) -> bool:
    return (schema.name is not None and schema.name.startswith(PROTOBUF_TYPE_UNION)) or \
        is_generalized_union(schema)


def _to_raw(schema: Schema, value: Any) -> Any:
    t = schema.type
    if t in SCALAR_TYPES:
        return checked_scalar(t, value)
    if t is Type.BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataException(f"Invalid type for BYTES: {type(value).__name__}")
        return bytes(value)
    raise DataException(f"Unknown schema type: {t}")


__all__ = ["ProtobufData", "build_pool", "builtin_file_descriptors", "well_known_files",
           "message_name_for_indexes", "message_indexes_of", "meta_params", "meta_option_bytes",
           "to_map_field", "to_map_entry", "unscaled_to_bytes"]
