"""JSON Schema <-> Connect schemas, JSON values <-> Connect values, as Confluent's ``JsonSchemaData``.

JSON Schema documents are classified the way Confluent's converter (through
the everit library) sees them, then mapped:

===================================================== ============================================
``boolean``                                           BOOLEAN
``integer`` / ``number``                              INT64 / FLOAT64, unless ``connect.type`` says
                                                      ``int8``/``int16``/``int32``/``int64``/
                                                      ``float32``/``float64``/``bytes`` (Decimal)
``string``                                            STRING (BYTES with ``connect.type: bytes``)
``enum`` / ``const``                                  STRING with ``io.confluent.connect.json.Enum``
                                                      parameters (a null value is ``<NULL>``)
``object``                                            STRUCT, fields in ``connect.index`` order,
                                                      else declaration order; MAP(STRING, V) with
                                                      ``connect.type: map`` (``additionalProperties``)
``array``                                             ARRAY (``items``); MAP with ``connect.type:
                                                      map`` over ``{key, value}`` items
``oneOf``/``anyOf`` of ``null`` and T                 T, optional
other ``oneOf``/``anyOf``                             STRUCT ``io.confluent.connect.json.OneOf`` with
                                                      fields ``io.confluent.connect.json.OneOf.field.<i>``
                                                      (``connect_union_field_<i>`` with
                                                      ``generalized.sum.type.support``)
``allOf``                                             the merged object properties, else the
                                                      enum/const/number/string branch
``type: [A, B]``                                      as ``anyOf`` of A and B
``$ref``                                              the referenced schema (local ``#/...`` pointers,
                                                      and registry references by name)
===================================================== ============================================

``title`` names the schema, ``description`` is its doc, ``default`` its
default, ``connect.version`` (else the registry version, top level only) its
version and ``connect.parameters`` its parameters. Object properties are
required (non-optional) in Connect unless they are a ``oneOf`` with ``null``
or ``use.optional.for.nonrequired`` is true and they are not ``required``.

Not supported (DataException): ``{}``/``true`` (any value), ``false``,
``not``, tuple ``items`` and recursive ``$ref`` cycles.
"""

from __future__ import annotations

import base64
import binascii
import decimal as _decimal
import json
import math
from typing import Any, Mapping

from connector.api.config_def import ConfigDef, ConfigKey, ConfigType, case_insensitive_valid_string
from connector.api.errors import DataException
from connector.api.logical import Date, Decimal, Time, Timestamp
from connector.api.schema import Schema, SchemaBuilder, Type
from connector.api.struct import Struct
from converters.confluent.connect_names import (
    CONNECT_PARAMETERS_PROP,
    CONNECT_TYPE_PROP,
    CONNECT_VERSION_PROP,
    KEY_FIELD,
    VALUE_FIELD,
)
from converters.confluent.connect_schemas import non_optional
from converters.confluent.connect_values import (
    SCALAR_TYPES,
    check_logical_value,
    checked_scalar,
    field_value,
    logical_to_raw,
)
from converters.confluent.data_config import flag, keyword_arguments
from converters.confluent.sum_types import SumTypes, generalized_union_field_name

NAMESPACE = "io.confluent.connect.json"
CONNECT_INDEX_PROP = "connect.index"
CONNECT_TYPE_MAP = "map"
CONNECT_TYPE_BYTES = "bytes"
JSON_TYPE_ENUM = NAMESPACE + ".Enum"
JSON_TYPE_ONE_OF = NAMESPACE + ".OneOf"
NULL_MARKER = "<NULL>"

_CONNECT_TYPES = {
    "int8": Type.INT8, "int16": Type.INT16, "int32": Type.INT32, "int64": Type.INT64,
    "float32": Type.FLOAT32, "float64": Type.FLOAT64, "bytes": Type.BYTES,
}
_OBJECT_KEYWORDS = ("properties", "required", "additionalProperties", "patternProperties",
                    "minProperties", "maxProperties", "dependencies", "propertyNames")
_ARRAY_KEYWORDS = ("items", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains")
_STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_MISSING: Any = object()


# ==================================================================================================
# JSON Schema model
# ==================================================================================================

class JNode:
    """A classified JSON Schema node (everit's Schema classes, flattened)."""

    __slots__ = ("kind", "raw", "doc_key", "title", "description", "default", "props",
                 "requires_integer", "criterion", "subschemas", "properties", "required",
                 "additional", "items", "values", "ref", "synthetic", "format")

    def __init__(self, kind: str, raw: Any, doc_key: Any = None):
        self.kind = kind
        self.raw = raw
        self.doc_key = doc_key
        self.title: str | None = None
        self.description: str | None = None
        self.default: Any = _MISSING
        self.props: dict[str, Any] = {}
        self.requires_integer = False
        self.criterion: str | None = None
        self.subschemas: list[JNode] = []
        self.properties: dict[str, JNode] = {}
        self.required: list[str] = []
        self.additional: Any = True          # True / False / JNode
        self.items: JNode | None = None
        self.values: list[Any] = []
        self.ref: str | None = None
        self.synthetic = False
        self.format: str | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    def __repr__(self) -> str:
        return f"JNode({self.kind}{' ' + self.title if self.title else ''})"


class JsonSchemaDocument:
    """A JSON Schema and the documents it references (by reference name), parsed once."""

    def __init__(self, root: Any, references: Mapping[str, Any] | None = None):
        self.docs: dict[Any, Any] = {None: root}
        for name, doc in (references or {}).items():
            self.docs[name] = doc
        self._nodes: dict[tuple[Any, int], JNode] = {}
        self.root = self.parse(root, None)

    # -- refs --

    def resolve(self, node: JNode) -> JNode:
        ref = node.ref or ""
        doc_part, _, pointer = ref.partition("#")
        doc_key = node.doc_key
        if doc_part:
            if doc_part in self.docs:
                doc_key = doc_part
            else:
                matches = [k for k in self.docs if isinstance(k, str) and (
                    k.endswith("/" + doc_part) or doc_part.endswith("/" + k))]
                if len(matches) != 1:
                    raise DataException(f"Cannot resolve JSON Schema reference '{ref}'")
                doc_key = matches[0]
        target: Any = self.docs[doc_key]
        for token in [t for t in pointer.split("/") if t]:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                raise DataException(f"Cannot resolve JSON Schema reference '{ref}'")
        return self.parse(target, doc_key)

    # -- parsing --

    def parse(self, obj: Any, doc_key: Any) -> JNode:
        key = (doc_key, id(obj))
        node = self._nodes.get(key)
        if node is not None:
            return node
        node = self._parse(obj, doc_key)
        self._nodes[key] = node
        return node

    def _common(self, node: JNode, obj: dict) -> None:
        title = obj.get("title")
        node.title = title if isinstance(title, str) else None
        desc = obj.get("description")
        node.description = desc if isinstance(desc, str) else None
        if "default" in obj:
            node.default = obj["default"]
        node.props = {k: v for k, v in obj.items() if isinstance(k, str) and k.startswith("connect.")}

    def _parse(self, obj: Any, doc_key: Any) -> JNode:
        if obj is True:
            return JNode("empty", obj, doc_key)
        if obj is False:
            return JNode("false", obj, doc_key)
        if not isinstance(obj, dict):
            raise DataException(f"Invalid JSON Schema: expected an object or a boolean, got "
                                f"{json.dumps(obj)[:100]}")
        if "$ref" in obj:
            node = JNode("ref", obj, doc_key)
            node.ref = str(obj["$ref"])
            self._common(node, obj)
            return node
        builders: list[JNode] = []
        if "enum" in obj:
            n = JNode("enum", obj, doc_key)
            n.values = list(obj["enum"]) if isinstance(obj["enum"], list) else []
            builders.append(n)
        if "const" in obj:
            n = JNode("const", obj, doc_key)
            n.values = [obj["const"]]
            builders.append(n)
        for comb in ("allOf", "anyOf", "oneOf"):
            if comb in obj and isinstance(obj[comb], list):
                n = JNode("combined", obj, doc_key)
                n.criterion = comb
                n.subschemas = [self.parse(s, doc_key) for s in obj[comb]]
                builders.append(n)
        if "not" in obj:
            builders.append(JNode("not", obj, doc_key))
        t = obj.get("type")
        if isinstance(t, str):
            builders.append(self._typed(t, obj, doc_key))
        elif isinstance(t, list):
            n = JNode("combined", obj, doc_key)
            n.criterion = "anyOf"
            n.subschemas = [self._typed(str(x), obj, doc_key) for x in t]
            n.synthetic = True
            builders.append(n)
        else:
            if any(k in obj for k in _OBJECT_KEYWORDS):
                builders.append(self._typed("object", obj, doc_key))
            if any(k in obj for k in _ARRAY_KEYWORDS):
                builders.append(self._typed("array", obj, doc_key))
            if any(k in obj for k in _STRING_KEYWORDS):
                builders.append(self._typed("string", obj, doc_key))
            if any(k in obj for k in _NUMBER_KEYWORDS):
                builders.append(self._typed("number", obj, doc_key))
        if not builders:
            node = JNode("empty", obj, doc_key)
        elif len(builders) == 1:
            node = builders[0]
        else:
            node = JNode("combined", obj, doc_key)
            node.criterion = "allOf"
            node.subschemas = builders
            node.synthetic = True
            for b in builders:
                self._common(b, obj)
        self._common(node, obj)
        return node

    def _typed(self, t: str, obj: dict, doc_key: Any) -> JNode:
        if t == "string":
            n = JNode("string", obj, doc_key)
            fmt = obj.get("format")
            n.format = fmt if isinstance(fmt, str) else None
            return n
        if t in ("integer", "number"):
            n = JNode("number", obj, doc_key)
            n.requires_integer = t == "integer"
            return n
        if t == "boolean":
            return JNode("boolean", obj, doc_key)
        if t == "null":
            return JNode("null", obj, doc_key)
        if t == "object":
            n = JNode("object", obj, doc_key)
            props = obj.get("properties") or {}
            if not isinstance(props, dict):
                raise DataException("Invalid JSON Schema: properties must be an object")
            n.properties = {name: self.parse(s, doc_key) for name, s in props.items()}
            req = obj.get("required") or []
            n.required = [r for r in req if isinstance(r, str)] if isinstance(req, list) else []
            add = obj.get("additionalProperties", True)
            n.additional = add if isinstance(add, bool) else self.parse(add, doc_key)
            return n
        if t == "array":
            n = JNode("array", obj, doc_key)
            items = obj.get("items")
            if isinstance(items, (dict, bool)):
                n.items = self.parse(items, doc_key)
            return n
        raise DataException(f"Invalid JSON Schema: unknown type '{t}'")


# ==================================================================================================
# JsonSchemaData
# ==================================================================================================

#: Confluent's ``JsonSchemaDataConfig``.
JSON_SCHEMA_DATA_CONFIG = ConfigDef([
    flag("use.optional.for.nonrequired", False, "medium", "properties not listed in `required` are optional"),
    flag("object.additional.properties", True, "medium", "writing: `false` writes `\"additionalProperties\": false`"),
    ConfigKey("decimal.format", ConfigType.STRING, "BASE64", case_insensitive_valid_string("BASE64", "NUMERIC"),
              "low", "writing: Decimals as base64 text or JSON numbers"),
    flag("generalized.sum.type.support", False, "medium",
         "`oneOf` / enums as `connect_union_*` / `org.apache.kafka.connect.data.Enum`"),
    flag("flatten.singleton.unions", True, "low", "a one-branch `oneOf` reads as its branch"),
    flag("ignore.default.for.nullables", False, "low", "writing: a null field is not replaced by its default"),
])


class JsonSchemaData:
    """Converts between JSON Schema/JSON values and Connect schemas/values."""

    def __init__(self, *, use_optional_for_nonrequired: bool = False,
                 object_additional_properties: bool = True, decimal_format: str = "BASE64",
                 generalized_sum_type_support: bool = False, flatten_singleton_unions: bool = True,
                 ignore_default_for_nullables: bool = False):
        self.use_optional_for_nonrequired = use_optional_for_nonrequired
        self.object_additional_properties = object_additional_properties
        self.decimal_format = decimal_format.upper()
        if self.decimal_format not in ("BASE64", "NUMERIC"):
            raise DataException(f"Unexpected decimal.format: {decimal_format}")
        self.generalized = generalized_sum_type_support
        self.sum_types = SumTypes(JSON_TYPE_ENUM, JSON_TYPE_ONE_OF, generalized_sum_type_support)
        self.flatten_singleton_unions = flatten_singleton_unions
        self.ignore_default_for_nullables = ignore_default_for_nullables

    @classmethod
    def from_config(cls, values: Mapping[str, Any]) -> "JsonSchemaData":
        """From parsed ``JSON_SCHEMA_DATA_CONFIG`` values."""
        return cls(**keyword_arguments(JSON_SCHEMA_DATA_CONFIG, values))

    # ---------------------------------------------------------------------------------------------
    # JSON Schema -> Connect schema
    # ---------------------------------------------------------------------------------------------

    def to_connect_schema(self, document: JsonSchemaDocument, version: int | None = None) -> Schema:
        ctx = _Ctx(document)
        return self._to_connect(ctx, document.root, version, False)

    def _to_connect(self, ctx: "_Ctx", node: JNode, version: int | None, force_optional: bool
                    ) -> Schema:
        k = node.kind
        builder: SchemaBuilder
        if k == "boolean":
            builder = SchemaBuilder.bool()
        elif k == "number":
            t = node.props.get(CONNECT_TYPE_PROP)
            if t is None:
                builder = SchemaBuilder.int64() if node.requires_integer else SchemaBuilder.float64()
            else:
                if t not in _CONNECT_TYPES:
                    raise DataException(f"Unsupported type {t}")
                builder = SchemaBuilder(_CONNECT_TYPES[t])
        elif k == "string":
            t = node.props.get(CONNECT_TYPE_PROP)
            builder = SchemaBuilder.bytes() if t == CONNECT_TYPE_BYTES else SchemaBuilder.string()
        elif k in ("const", "enum"):
            builder = SchemaBuilder.string()
            symbols = (NULL_MARKER if v is None else _java_to_string(v) for v in node.values)
            builder.parameters(self.sum_types.enum_parameters("", symbols))
        elif k == "combined":
            subs = node.subschemas
            if len(subs) == 1 and self.flatten_singleton_unions:
                return self._to_connect(ctx, subs[0], None, False)
            if node.criterion == "allOf":
                return self._all_of(ctx, node, version, force_optional)
            name, union_params = self.sum_types.union(ctx.union_index)
            ctx.union_index += 1
            if len(subs) == 2:
                non_null = [s for s in subs if self._deref(ctx, s).kind != "null"]
                if len(non_null) == 1:
                    return self._to_connect(ctx, non_null[0], version, True)
            builder = SchemaBuilder.struct().name(name).parameters(union_params)
            index = 0
            for sub in subs:
                if self._deref(ctx, sub).kind == "null":
                    builder.optional()
                    continue
                fname = generalized_union_field_name(index) if self.generalized \
                    else f"{name}.field.{index}"
                builder.field(fname, self._to_connect(ctx, sub, None, True))
                index += 1
        elif k == "array":
            items = node.items
            if items is None:
                raise DataException("Array schema did not specify the items type")
            items_node = self._deref(ctx, items)
            if node.props.get(CONNECT_TYPE_PROP) == CONNECT_TYPE_MAP and items_node.kind == "object":
                key_node = items_node.properties.get(KEY_FIELD)
                value_node = items_node.properties.get(VALUE_FIELD)
                if key_node is None or value_node is None:
                    raise DataException("Map encoded as an array needs key and value properties")
                builder = SchemaBuilder.map(self._to_connect(ctx, key_node, None, False),
                                            self._to_connect(ctx, value_node, None, False))
            else:
                builder = SchemaBuilder.array(self._to_connect(ctx, items, None, False))
        elif k == "object":
            if node.props.get(CONNECT_TYPE_PROP) == CONNECT_TYPE_MAP:
                add = node.additional
                if not isinstance(add, JNode):
                    raise DataException("A map object schema needs an additionalProperties schema")
                builder = SchemaBuilder.map(Schema.STRING_SCHEMA,
                                            self._to_connect(ctx, add, None, False))
            else:
                if node in ctx.in_progress:
                    raise DataException("Recursive JSON Schema references are not supported: "
                                        "Connect schemas cannot refer to themselves")
                ctx.in_progress.append(node)
                try:
                    builder = SchemaBuilder.struct()
                    for name, sub in self._ordered_properties(node):
                        optional = self.use_optional_for_nonrequired and name not in node.required
                        builder.field(name, self._to_connect(ctx, sub, None, optional))
                finally:
                    ctx.in_progress.pop()
        elif k == "ref":
            return self._to_connect(ctx, ctx.document.resolve(node), version, force_optional)
        elif k == "empty":
            raise DataException("Unsupported JSON Schema: an empty schema ({} or true) accepts any "
                                "value and has no Connect equivalent")
        else:
            raise DataException(f"Unsupported schema type {k}")

        if node.title is not None and _builder_name(builder) is None:
            builder.name(node.title)
        connect_version = node.props.get(CONNECT_VERSION_PROP)
        if isinstance(connect_version, int) and not isinstance(connect_version, bool):
            builder.version(connect_version)
        elif version is not None:
            builder.version(version)
        if node.description is not None:
            builder.doc(node.description)
        params = node.props.get(CONNECT_PARAMETERS_PROP)
        if isinstance(params, dict):
            builder.parameters({str(pk): _java_to_string(pv) for pk, pv in params.items()})
        if force_optional:
            builder.optional()
        if node.has_default:
            try:
                peek = builder.build()
                default = self.to_connect_value(peek, node.default)
                if default is not None:
                    builder.default_value(default)
            except DataException:
                pass  # an invalid default is ignored
        return builder.build()

    def _deref(self, ctx: "_Ctx", node: JNode) -> JNode:
        seen = 0
        while node.kind == "ref" and seen < 100:
            node = ctx.document.resolve(node)
            seen += 1
        return node

    def _ordered_properties(self, node: JNode) -> list[tuple[str, JNode]]:
        indexed = []
        for position, (name, sub) in enumerate(node.properties.items()):
            index = sub.props.get(CONNECT_INDEX_PROP)
            if not isinstance(index, int) or isinstance(index, bool):
                index = position
            indexed.append((index, position, name, sub))
        indexed.sort(key=lambda x: (x[0], x[1]))
        return [(name, sub) for _, _, name, sub in indexed]

    def _all_of(self, ctx: "_Ctx", node: JNode, version: int | None, force_optional: bool) -> Schema:
        kinds: dict[str, JNode] = {}  # the last subschema of each kind
        properties: dict[str, JNode] = {}
        required: dict[str, bool] = {}
        for sub in node.subschemas:
            kinds[sub.kind] = sub
            self._collect_properties(ctx, sub, properties, required, set())
        if properties:
            builder = SchemaBuilder.struct()
            for name, sub in properties.items():
                optional = self.use_optional_for_nonrequired and not required.get(name, False)
                builder.field(name, self._to_connect(ctx, sub, None, optional))
            if force_optional:
                builder.optional()
            return builder.build()
        member = _all_of_member(kinds)
        if member is None:
            raise DataException(f"Unsupported criterion allOf for {json.dumps(node.raw)[:200]}")
        return self._to_connect(ctx, member, version, force_optional)

    def _collect_properties(self, ctx: "_Ctx", node: JNode, properties: dict, required: dict,
                            visited: set) -> None:
        if id(node) in visited:
            return
        visited.add(id(node))
        if node.kind == "combined" and node.criterion == "allOf":
            for sub in node.subschemas:
                self._collect_properties(ctx, sub, properties, required, visited)
        elif node.kind == "object":
            for name, sub in node.properties.items():
                properties[name] = sub
                required[name] = name in node.required
        elif node.kind == "ref":
            self._collect_properties(ctx, ctx.document.resolve(node), properties, required, visited)

    # ---------------------------------------------------------------------------------------------
    # JSON value -> Connect value
    # ---------------------------------------------------------------------------------------------

    def to_connect_value(self, schema: Schema | None, value: Any) -> Any:
        """Convert a decoded JSON value (``json.loads`` with ``parse_float=Decimal``) to Connect."""
        if schema is None:
            return None if value is _MISSING else decimals_as_floats(value)
        if value is None or value is _MISSING:
            if schema.default is not None:
                return schema.default
            if value is _MISSING or schema.optional:
                return None
            raise DataException(f"Invalid null value for required {schema.type.name} field")
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            if _is_number(value):
                return _decimal.Decimal(value) if not isinstance(value, _decimal.Decimal) else value
            if isinstance(value, str):
                try:
                    return Decimal.to_logical(schema, base64.b64decode(value, validate=True))
                except (binascii.Error, ValueError) as exc:
                    raise DataException(f"Invalid bytes for Decimal field: {exc}") from exc
            raise DataException(f"Invalid type for Decimal, underlying representation should be "
                                f"numeric or bytes but was {_json_type(value)}")
        if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME):
            if not _is_int(value) or not -(2**31) <= int(value) < 2**31:
                raise DataException(f"Invalid type for {name.rsplit('.', 1)[-1]}, underlying "
                                    f"representation should be integer but was {_json_type(value)}")
            cls = Date if name == Date.LOGICAL_NAME else Time
            try:
                return cls.to_logical(schema, int(value))
            except OverflowError as exc:
                raise DataException(f"{name} value {value} is out of range") from exc
        if name == Timestamp.LOGICAL_NAME:
            if not _is_int(value):
                raise DataException(f"Invalid type for Timestamp, underlying representation should "
                                    f"be integral but was {_json_type(value)}")
            try:
                return Timestamp.to_logical(schema, int(value))
            except OverflowError as exc:
                raise DataException(f"Timestamp value {value} is out of range") from exc
        t = schema.type
        if t is Type.BOOLEAN:
            if not isinstance(value, bool):
                raise DataException(f"Expected a JSON boolean for a BOOLEAN field, got "
                                    f"{_json_type(value)}")
            return value
        if t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
            if not _is_number(value) or not _is_integral(value):
                raise DataException(f"Expected a JSON integer for an {t.name} field, got "
                                    f"{_json_type(value)} {_short(value)}")
            number = int(value)
            bits = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}[t]
            if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
                raise DataException(f"JSON number {number} is out of range for {t.name}")
            return number
        if t in (Type.FLOAT32, Type.FLOAT64):
            if not _is_number(value):
                raise DataException(f"Expected a JSON number for a {t.name} field, got "
                                    f"{_json_type(value)}")
            return float(value)
        if t is Type.STRING:
            if not isinstance(value, str):
                raise DataException(f"Expected a JSON string for a STRING field, got "
                                    f"{_json_type(value)}")
            return value
        if t is Type.BYTES:
            if isinstance(value, str):
                try:
                    return base64.b64decode(value, validate=True)
                except (binascii.Error, ValueError) as exc:
                    raise DataException(f"Invalid base64 for a BYTES field: {exc}") from exc
            raise DataException(f"Expected a base64 JSON string for a BYTES field, got "
                                f"{_json_type(value)}")
        if t is Type.ARRAY:
            if not isinstance(value, list):
                raise DataException(f"Expected a JSON array for an ARRAY field, got "
                                    f"{_json_type(value)}")
            return [self.to_connect_value(schema.value_schema, e) for e in value]
        if t is Type.MAP:
            ks, vs = schema.key_schema, schema.value_schema
            if ks.type is Type.STRING and not ks.optional:  # type: ignore[union-attr]
                if not isinstance(value, dict):
                    raise DataException(f"Maps with string fields should be encoded as JSON "
                                        f"objects, but found {_json_type(value)}")
                return {mk: self.to_connect_value(vs, mv) for mk, mv in value.items()}
            if not isinstance(value, list):
                raise DataException(f"Maps with non-string fields should be encoded as JSON array "
                                    f"of objects, but found {_json_type(value)}")
            out = {}
            for entry in value:
                if not isinstance(entry, dict):
                    raise DataException(f"Found invalid map entry instead of object: "
                                        f"{_json_type(entry)}")
                if len(entry) != 2:
                    raise DataException(f"Found invalid map entry, expected length 2 but found "
                                        f":{len(entry)}")
                out[self.to_connect_value(ks, entry.get(KEY_FIELD, _MISSING))] = \
                    self.to_connect_value(vs, entry.get(VALUE_FIELD, _MISSING))
            return out
        if t is Type.STRUCT:
            if self.sum_types.is_union(schema):
                return self._union_value(schema, value)
            if not isinstance(value, dict):
                raise DataException(f"Structs should be encoded as JSON objects, but found "
                                    f"{_json_type(value)}")
            struct = Struct(schema)
            for f in schema.fields():
                v = self.to_connect_value(f.schema, value.get(f.name, _MISSING))
                if v is not None:
                    struct.put(f, v)
            return struct
        raise DataException(f"Unknown schema type: {t}")

    def _union_value(self, schema: Schema, value: Any) -> Struct:
        best = None
        best_count = 0
        for f in schema.fields():
            if _matches_simple(f.schema, value):
                return Struct(schema).put(f, self.to_connect_value(f.schema, value))
            count = _match_struct(f.schema, value)
            if count > best_count:
                best, best_count = f, count
        if best is not None:
            return Struct(schema).put(best, self.to_connect_value(best.schema, value))
        raise DataException("Did not find matching oneof field for data")

    # ---------------------------------------------------------------------------------------------
    # Connect schema -> JSON Schema
    # ---------------------------------------------------------------------------------------------

    def from_connect_schema(self, schema: Schema | None) -> Any:
        """The JSON Schema (decoded JSON) Confluent's JsonSchemaData produces for ``schema``."""
        if schema is None:
            return True
        return self._raw(schema, None, False)

    def _raw(self, schema: Schema, index: int | None, ignore_optional: bool) -> Any:
        t = schema.type
        params = schema.parameters or {}
        out: dict[str, Any]
        props: dict[str, Any] = {}
        combined = False
        if t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
            out = {"type": "integer"}
            props[CONNECT_TYPE_PROP] = t.name.lower()
        elif t in (Type.FLOAT32, Type.FLOAT64):
            out = {"type": "number"}
            props[CONNECT_TYPE_PROP] = t.name.lower()
        elif t is Type.BOOLEAN:
            out = {"type": "boolean"}
        elif t is Type.STRING:
            if self.sum_types.is_enum(params):
                symbols = [None if symbol == NULL_MARKER else symbol
                           for symbol in self.sum_types.enum_symbols(params)]
                out = {"enum": symbols}
            else:
                out = {"type": "string"}
        elif t is Type.BYTES:
            numeric = schema.name == Decimal.LOGICAL_NAME and self.decimal_format == "NUMERIC"
            out = {"type": "number" if numeric else "string"}
            props[CONNECT_TYPE_PROP] = CONNECT_TYPE_BYTES
        elif t is Type.ARRAY:
            out = {"type": "array", "items": self._raw(schema.value_schema, None, False)}  # type: ignore[arg-type]
        elif t is Type.MAP:
            ks = schema.key_schema
            if ks.type is Type.STRING and not ks.optional:  # type: ignore[union-attr]
                out = {"type": "object",
                       "additionalProperties": self._raw(schema.value_schema, None, False)}  # type: ignore[arg-type]
            else:
                out = {"type": "array", "items": {"type": "object", "properties": {
                    KEY_FIELD: self._raw(ks, 0, False),  # type: ignore[arg-type]
                    VALUE_FIELD: self._raw(schema.value_schema, 1, False)}}}  # type: ignore[arg-type]
            props[CONNECT_TYPE_PROP] = CONNECT_TYPE_MAP
        elif t is Type.STRUCT:
            if self.sum_types.is_union(schema):
                subs: list[Any] = [{"type": "null"}] if schema.optional else []
                subs += [self._raw(non_optional(f.schema), f.index, True) for f in schema.fields()]
                out = {"oneOf": subs}
                combined = True
            elif schema.optional:
                out = {"oneOf": [{"type": "null"}, self._raw(non_optional(schema), None, False)]}
                combined = True
            else:
                out = {"type": "object", "properties": {
                    f.name: self._raw(f.schema, f.index, False) for f in schema.fields()}}
                if not self.object_additional_properties:
                    out["additionalProperties"] = False
        else:
            raise DataException(f"Unsupported type {t}")

        if not combined:
            if schema.name is not None:
                out["title"] = schema.name
            if schema.version is not None:
                props[CONNECT_VERSION_PROP] = schema.version
            if schema.doc is not None:
                out["description"] = schema.doc
            p = {k: v for k, v in params.items() if not k.startswith(NAMESPACE)}
            if p:
                props[CONNECT_PARAMETERS_PROP] = p
            if schema.default is not None:
                out["default"] = self.to_json_value(schema, schema.default)
            if not ignore_optional and schema.optional:
                inner = dict(out)
                inner.update(props)
                out = {"oneOf": [{"type": "null"}, inner]}
                props = {}
        if index is not None:
            props[CONNECT_INDEX_PROP] = index
        out.update(props)
        return out

    # ---------------------------------------------------------------------------------------------
    # Connect value -> JSON value
    # ---------------------------------------------------------------------------------------------

    def to_json_value(self, schema: Schema | None, value: Any) -> Any:
        """The JSON value (for ``json.dumps``; decimals as ``decimal.Decimal``) of a Connect value."""
        if value is None:
            if schema is None:
                return None
            if schema.default is not None and not self.ignore_default_for_nullables:
                return self.to_json_value(schema, schema.default)
            return None
        if schema is None:
            return _schemaless_json(value)
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            check_logical_value(schema, value)
            if self.decimal_format == "NUMERIC":
                return value
            return base64.b64encode(Decimal.from_logical(schema, value)).decode("ascii")
        if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
            return logical_to_raw(schema, value)
        t = schema.type
        if t in SCALAR_TYPES:
            scalar = checked_scalar(t, value)
            if t in (Type.FLOAT32, Type.FLOAT64) and not math.isfinite(scalar):
                raise DataException(f"JSON cannot represent {value}")
            return scalar
        if t is Type.BYTES:
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise DataException(f"Invalid type for bytes type: {type(value).__name__}")
            return base64.b64encode(bytes(value)).decode("ascii")
        if t is Type.ARRAY:
            return [self.to_json_value(schema.value_schema, e) for e in value]
        if t is Type.MAP:
            ks, vs = schema.key_schema, schema.value_schema
            if ks.type is Type.STRING and not ks.optional:  # type: ignore[union-attr]
                return {str(self.to_json_value(ks, k)): self.to_json_value(vs, v)
                        for k, v in value.items()}
            return [{KEY_FIELD: self.to_json_value(ks, k), VALUE_FIELD: self.to_json_value(vs, v)}
                    for k, v in value.items()]
        if t is Type.STRUCT:
            if not isinstance(value, Struct) or value.schema != schema:
                raise DataException("Mismatching schema.")
            if self.sum_types.is_union(schema):
                for f in schema.fields():
                    v = field_value(value, f, self.ignore_default_for_nullables)
                    if v is not None:
                        return self.to_json_value(f.schema, v)
                return None
            out = {}
            for f in schema.fields():
                v = field_value(value, f, self.ignore_default_for_nullables)
                j = self.to_json_value(f.schema, v)
                if j is not None or f.schema.optional:
                    out[f.name] = j
            return out
        raise DataException("Couldn't convert value to JSON.")


class _Ctx:
    def __init__(self, document: JsonSchemaDocument):
        self.document = document
        self.in_progress: list[JNode] = []
        self.union_index = 0


# ==================================================================================================
# helpers
# ==================================================================================================

def _all_of_member(kinds: Mapping[str, JNode]) -> JNode | None:
    """The subschema an ``allOf`` without object properties reads as, given its last subschema of each kind."""
    string, number = kinds.get("string"), kinds.get("number")
    if "combined" in kinds:
        return kinds["combined"]
    if "const" in kinds:
        return string if string is not None else number
    if "enum" in kinds:
        return kinds["enum"] if string is not None else number
    if string is not None and string.format is not None:
        return number if number is not None else string
    return kinds.get("ref")


def _builder_name(builder: SchemaBuilder) -> str | None:
    return builder.build().name


def _java_to_string(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, _decimal.Decimal)):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    return json.dumps(v, separators=(",", ":"), default=str)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, _decimal.Decimal)) and not isinstance(v, bool)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_integral(v: Any) -> bool:
    if isinstance(v, int):
        return True
    try:
        return math.isfinite(v) and v == int(v)
    except (ValueError, OverflowError, TypeError, _decimal.InvalidOperation):
        return False


# Jackson's JsonNodeType names of decoded JSON values, tested in order (a bool is an int, not a NUMBER)
_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "NULL"), (bool, "BOOLEAN"), ((int, float, _decimal.Decimal), "NUMBER"), (str, "STRING"),
    (list, "ARRAY"), (dict, "OBJECT"),
)


def _json_type(v: Any) -> str:
    """The kind of a decoded JSON value as Confluent's messages name it."""
    return next((name for types, name in _JSON_TYPES if isinstance(v, types)), type(v).__name__)


def _short(v: Any) -> str:
    text = str(v)
    return text if len(text) < 40 else text[:40] + "..."


def _matches_simple(schema: Schema, value: Any) -> bool:
    t = schema.type
    if t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        return _is_int(value)
    if t in (Type.FLOAT32, Type.FLOAT64):
        return _is_number(value)
    if t is Type.BOOLEAN:
        return isinstance(value, bool)
    if t is Type.STRING:
        return isinstance(value, str)
    if t is Type.BYTES:
        return isinstance(value, (_decimal.Decimal, float))
    if t is Type.ARRAY:
        return isinstance(value, list)
    if t is Type.MAP:
        return isinstance(value, (dict, list))
    return False


def _match_struct(schema: Schema, value: Any) -> int:
    if schema.type is not Type.STRUCT or not isinstance(value, dict):
        return 0
    names = {f.name for f in schema.fields()}
    common = names & set(value)
    score = len(common)
    for name in common:
        field = schema.field(name)
        if field is not None:  # always: name is one of the schema's fields
            score += _match_struct(field.schema, value[name])
    return score


def decimals_as_floats(value: Any) -> Any:
    """A decoded JSON value (:func:`loads_json`) with its decimal numbers as floats: a schemaless value."""
    if isinstance(value, _decimal.Decimal):
        return float(value)
    if isinstance(value, list):
        return [decimals_as_floats(e) for e in value]
    if isinstance(value, dict):
        return {k: decimals_as_floats(v) for k, v in value.items()}
    return value


def _schemaless_json(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, list):
        return [_schemaless_json(e) for e in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _schemaless_json(v) for k, v in value.items()}
        return [{KEY_FIELD: _schemaless_json(k), VALUE_FIELD: _schemaless_json(v)}
                for k, v in value.items()]
    return value


def dumps_json(value: Any) -> bytes:
    """Encode a JSON value; ``decimal.Decimal`` numbers are written exactly (keeping their scale)."""
    out: list[str] = []
    _write_json(value, out)
    return "".join(out).encode("utf-8")


def _write_json(v: Any, out: list[str]) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, _decimal.Decimal):
        if not v.is_finite():
            raise DataException(f"JSON cannot represent {v}")
        out.append(str(v))
    elif isinstance(v, int):
        out.append(str(v))
    elif isinstance(v, float):
        try:
            out.append(json.dumps(v, allow_nan=False))
        except ValueError as exc:
            raise DataException(f"JSON cannot represent {v}") from exc
    elif isinstance(v, str):
        out.append(json.dumps(v, ensure_ascii=False))
    elif isinstance(v, (list, tuple)):
        out.append("[")
        for i, e in enumerate(v):
            if i:
                out.append(",")
            _write_json(e, out)
        out.append("]")
    elif isinstance(v, dict):
        out.append("{")
        for i, (k, e) in enumerate(v.items()):
            if i:
                out.append(",")
            out.append(json.dumps(str(k), ensure_ascii=False))
            out.append(":")
            _write_json(e, out)
        out.append("}")
    else:
        raise DataException(f"Cannot write {type(v).__name__} as JSON")


def loads_json(data: bytes | memoryview | str) -> Any:
    """Decode JSON keeping non-integral numbers exact (``decimal.Decimal``)."""
    if isinstance(data, memoryview):
        data = data.tobytes()
    return json.loads(data, parse_float=_decimal.Decimal)
