"""Property tests: random Avro data decodes as fastavro reads it; random Connect data round-trips."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import itertools
import json
import struct as _struct

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connector.api import Schema, SchemaBuilder, Struct, Type
from converters.confluent import wire_format
from converters.confluent.avro import AvroConverter
from converters.confluent.registry_client import SchemaRegistryClient
from tests.confluent import converter, unique

UTC = dt.timezone.utc
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.data_too_large])

names = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)


def f32(x: float) -> float:
    return _struct.unpack("f", _struct.pack("f", x))[0]


# --- random Avro schemas with matching datums --------------------------------------------------

@st.composite
def avro_schema(draw, counter, depth=0):
    """(schema JSON, strategy of datums for it)."""
    leaves = ["boolean", "int", "long", "float", "double", "string", "bytes", "enum", "fixed",
              "date", "time", "timestamp", "decimal", "fixed_decimal"]
    composite = ["record", "array", "map", "union", "optional"] if depth < 3 else []
    kind = draw(st.sampled_from(leaves + composite * 2))
    n = next(counter)
    if kind == "boolean":
        return "boolean", st.booleans()
    if kind == "int":
        return "int", st.integers(-(2**31), 2**31 - 1)
    if kind == "long":
        return "long", st.integers(-(2**63), 2**63 - 1)
    if kind == "float":
        return "float", st.floats(width=32, allow_nan=False)
    if kind == "double":
        return "double", st.floats(allow_nan=False)
    if kind == "string":
        return "string", st.text(max_size=8)
    if kind == "bytes":
        return "bytes", st.binary(max_size=8)
    if kind == "enum":
        symbols = draw(st.lists(st.from_regex(r"[A-Z][A-Z0-9_]{0,4}", fullmatch=True), min_size=1,
                                max_size=4, unique=True))
        return {"type": "enum", "name": f"E{n}", "symbols": symbols}, st.sampled_from(symbols)
    if kind == "fixed":
        size = draw(st.integers(0, 6))
        return {"type": "fixed", "name": f"F{n}", "size": size}, st.binary(min_size=size, max_size=size)
    if kind == "date":
        return {"type": "int", "logicalType": "date"}, st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))
    if kind == "time":
        return ({"type": "int", "logicalType": "time-millis"},
                st.integers(0, 86_399_999).map(lambda ms: dt.time(ms // 3_600_000, ms // 60_000 % 60,
                                                                  ms // 1000 % 60, ms % 1000 * 1000)))
    if kind == "timestamp":
        return ({"type": "long", "logicalType": "timestamp-millis"},
                st.integers(-(2**40), 2**42).map(
                    lambda ms: dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=ms)))
    if kind in ("decimal", "fixed_decimal"):
        precision = draw(st.integers(1, 18))
        scale = draw(st.integers(0, precision))
        values = st.integers(-(10**precision) + 1, 10**precision - 1).map(
            lambda u: decimal.Decimal(u).scaleb(-scale))
        if kind == "decimal":
            return {"type": "bytes", "logicalType": "decimal", "precision": precision,
                    "scale": scale}, values
        return {"type": "fixed", "name": f"D{n}", "size": 8, "logicalType": "decimal",
                "precision": precision, "scale": scale}, values
    if kind == "record":
        field_names = draw(st.lists(names, min_size=0, max_size=4, unique=True))
        fields, strategies = [], {}
        for name in field_names:
            schema, strategy = draw(avro_schema(counter, depth + 1))
            fields.append({"name": name, "type": schema})
            strategies[name] = strategy
        return ({"type": "record", "name": f"R{n}", "fields": fields},
                st.fixed_dictionaries(strategies))
    if kind == "array":
        schema, strategy = draw(avro_schema(counter, depth + 1))
        return {"type": "array", "items": schema}, st.lists(strategy, max_size=3)
    if kind == "map":
        schema, strategy = draw(avro_schema(counter, depth + 1))
        return {"type": "map", "values": schema}, st.dictionaries(st.text(max_size=4), strategy,
                                                                  max_size=3)
    if kind == "optional":
        schema, strategy = draw(avro_schema(counter, depth + 1).filter(
            lambda s: not isinstance(s[0], list)))
        branches = ["null", schema] if draw(st.booleans()) else [schema, "null"]
        return branches, st.none() | strategy
    # a general union: distinct unnamed types plus named types
    options = {"int": st.integers(-(2**31), 2**31 - 1), "string": st.text(max_size=5),
               "boolean": st.booleans(), "double": st.floats(allow_nan=False),
               "long": st.integers(-(2**63), 2**63 - 1), "bytes": st.binary(max_size=4)}
    picked = draw(st.lists(st.sampled_from(sorted(options)), min_size=1, max_size=3, unique=True))
    branches: list = list(picked)
    strategies_by_branch = [(b, options[b]) for b in picked]
    if draw(st.booleans()):
        rec, rec_strategy = draw(avro_schema(counter, depth + 1).filter(
            lambda s: isinstance(s[0], dict) and s[0].get("type") == "record"))
        branches.append(rec)
        strategies_by_branch.append((rec["name"], rec_strategy))
    if len(branches) < 2:
        branches.append("null")
    if draw(st.booleans()) and "null" not in branches:
        branches.insert(0, "null")
    # datums tagged with their branch so fastavro writes exactly that branch
    tagged = st.one_of(*[s.map(lambda v, b=b: (b, v)) for b, s in strategies_by_branch])
    if "null" in branches:
        tagged = st.none() | tagged
    return branches, tagged


def untag(schema, datum):
    """The datum fastavro writes: tagged union values become plain values (or tuple notation)."""
    if isinstance(schema, list):
        if datum is None:
            return None
        if isinstance(datum, tuple) and len(datum) == 2 and isinstance(datum[0], str) and (
                datum[0] in schema or any(isinstance(b, dict) and b.get("name") == datum[0]
                                          for b in schema)):
            name, value = datum
            branch = next(b for b in schema if b == name or (isinstance(b, dict)
                                                              and b.get("name") == name))
            inner = untag(branch, value)
            return (name, inner) if isinstance(branch, dict) else inner
        branch = next(b for b in schema if b != "null")
        return untag(branch, datum)
    if isinstance(schema, dict):
        t = schema["type"]
        if t == "record":
            return {f["name"]: untag(f["type"], datum[f["name"]]) for f in schema["fields"]}
        if t == "array":
            return [untag(schema["items"], d) for d in datum]
        if t == "map":
            return {k: untag(schema["values"], v) for k, v in datum.items()}
    return datum


def general_union_branch_types(schema) -> list:
    return [b for b in schema if b != "null"] if isinstance(schema, list) else []


def plain(value):
    """A Connect value with union structs collapsed to their set member, structs as dicts."""
    if isinstance(value, Struct):
        if value.schema.name == "io.confluent.connect.avro.Union":
            for f in value.schema.fields():
                v = value.get(f)
                if v is not None:
                    return plain(v)
            return None
        return {f.name: plain(value.get(f)) for f in value.schema.fields()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def reference(schema, value):
    """fastavro's reading of the value, in the same plain form (tuples from unions dropped)."""
    if isinstance(value, tuple):
        return reference(schema, value[1])
    if isinstance(value, dict):
        return {k: reference(None, v) for k, v in value.items()}
    if isinstance(value, list):
        return [reference(None, v) for v in value]
    return value


@pytest.fixture(scope="module")
def avro_conv(schema_registry):
    return converter(AvroConverter, schema_registry.url)


@pytest.fixture(scope="module")
def client(schema_registry):
    return SchemaRegistryClient.from_config({"schema.registry.url": schema_registry.url})


@SETTINGS
@given(data=st.data())
def test_random_avro_decodes_like_fastavro(avro_conv, client, data):
    counter = itertools.count()
    schema, datum_strategy = data.draw(avro_schema(counter))
    datum = untag(schema, data.draw(datum_strategy))
    parsed = fastavro.parse_schema(schema)
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, parsed, datum)
    payload = buffer.getvalue()
    expected = fastavro.schemaless_reader(io.BytesIO(payload), parsed, None)

    topic = unique("prop-avro")
    schema_id = client.register(f"{topic}-value", json.dumps(schema))
    result = avro_conv.to_connect_data(topic, wire_format.frame(schema_id, payload))
    assert plain(result.value) == reference(schema, expected)
    if result.value is not None and isinstance(result.value, Struct):
        result.value.validate()
    # the schema is cached per id
    assert avro_conv.to_connect_data(topic, wire_format.frame(schema_id, payload)).schema is \
        result.schema


# --- random Connect schemas round-trip through the converter -----------------------------------

PRIMITIVES = {
    Type.INT8: st.integers(-128, 127), Type.INT16: st.integers(-(2**15), 2**15 - 1),
    Type.INT32: st.integers(-(2**31), 2**31 - 1), Type.INT64: st.integers(-(2**63), 2**63 - 1),
    Type.FLOAT32: st.floats(width=32, allow_nan=False), Type.FLOAT64: st.floats(allow_nan=False),
    Type.BOOLEAN: st.booleans(), Type.STRING: st.text(max_size=6), Type.BYTES: st.binary(max_size=6),
}


def _logical(kind: str, scale: int = 0, precision: int | None = None):
    if kind == "date":
        return (SchemaBuilder.int32().name("org.apache.kafka.connect.data.Date").version(1),
                st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)))
    if kind == "time":
        return (SchemaBuilder.int32().name("org.apache.kafka.connect.data.Time").version(1),
                st.integers(0, 86_399_999).map(lambda ms: dt.time(ms // 3_600_000, ms // 60_000 % 60,
                                                                  ms // 1000 % 60,
                                                                  ms % 1000 * 1000)))
    if kind == "timestamp":
        return (SchemaBuilder.int64().name("org.apache.kafka.connect.data.Timestamp").version(1),
                st.integers(-(2**40), 2**42).map(
                    lambda ms: dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=ms)))
    builder = SchemaBuilder.bytes().name("org.apache.kafka.connect.data.Decimal").version(1) \
        .parameter("scale", str(scale))
    if precision is not None:
        builder.parameter("connect.decimal.precision", str(precision))
    digits = precision or 20
    return builder, st.integers(-(10**digits) + 1, 10**digits - 1).map(
        lambda u: decimal.Decimal(u).scaleb(-scale))


@st.composite
def connect_schema(draw, counter, depth=0, allow_optional=True):
    """(Schema, strategy of values)."""
    kinds = ["primitive"] * 4 + ["logical"]
    if depth < 3:
        kinds += ["struct", "struct", "array", "map", "map_entry"]
    kind = draw(st.sampled_from(kinds))
    optional = allow_optional and draw(st.booleans())
    if kind == "primitive":
        t = draw(st.sampled_from(sorted(PRIMITIVES, key=lambda t: t.value)))
        builder, values = SchemaBuilder(t), PRIMITIVES[t]
        if draw(st.booleans()):
            builder.doc(draw(st.text(max_size=5)))
        if draw(st.booleans()):
            builder.parameter("p", draw(st.text(max_size=3)))
    elif kind == "logical":
        lk = draw(st.sampled_from(["date", "time", "timestamp", "decimal"]))
        precision = draw(st.none() | st.integers(1, 30))
        scale = draw(st.integers(0, precision if precision else 6))
        builder, values = _logical(lk, scale, precision)
    elif kind == "array":
        element, element_values = draw(connect_schema(counter, depth + 1))
        builder = SchemaBuilder.array(element)
        values = st.lists(element_values, max_size=3)
    elif kind == "map":
        value_schema, value_values = draw(connect_schema(counter, depth + 1))
        builder = SchemaBuilder.map(Schema.STRING_SCHEMA, value_schema)
        values = st.dictionaries(st.text(max_size=4), value_values, max_size=3)
    elif kind == "map_entry":
        key_type = draw(st.sampled_from([Type.INT32, Type.INT64, Type.BOOLEAN]))
        value_schema, value_values = draw(connect_schema(counter, depth + 1))
        builder = SchemaBuilder.map(Schema(key_type), value_schema).name(f"ns.Entries{next(counter)}")
        values = st.dictionaries(PRIMITIVES[key_type], value_values, max_size=3)
    else:
        builder = SchemaBuilder.struct()
        if draw(st.booleans()):
            builder.name(f"ns{depth}.Rec{next(counter)}")
        field_values = {}
        for name in draw(st.lists(names, max_size=4, unique=True)):
            fs, fv = draw(connect_schema(counter, depth + 1))
            builder.field(name, fs)
            field_values[name] = fv
        peek = builder.build()

        def make(d, s=peek):
            out = Struct(s)
            for k, v in d.items():
                out.put(k, v)
            return out

        values = st.fixed_dictionaries(field_values).map(make)
    if optional:
        builder.optional()
        schema = builder.build()
        if kind == "struct":
            values = values.map(lambda v, s=schema: _rebind(v, s))
        return schema, st.none() | values
    schema = builder.build()
    if kind == "struct":
        values = values.map(lambda v, s=schema: _rebind(v, s))
    return schema, values


def _rebind(struct: Struct, schema: Schema) -> Struct:
    out = Struct(schema)
    for f in schema.fields():
        v = struct.get_without_default(f.name)
        if v is not None:
            out.put(f, v)
    return out


@SETTINGS
@given(data=st.data())
def test_random_connect_data_round_trips(avro_conv, data):
    counter = itertools.count()
    schema, values = data.draw(connect_schema(counter, allow_optional=False))
    if schema.name is None or not schema.name.startswith("org.apache.kafka.connect.data."):
        schema = _with_version(schema, data.draw(st.integers(1, 9)))
        values = values.map(lambda v: _rebind(v, schema) if isinstance(v, Struct) else v)
    value = data.draw(values)
    topic = unique("prop-connect")
    encoded = avro_conv.from_connect_data(topic, schema, value)
    back = avro_conv.to_connect_data(topic, encoded)
    assert back.schema == schema
    assert _normalize(back.value) == _normalize(value)


def _normalize(value):
    if isinstance(value, Struct):
        return {f.name: _normalize(value.get(f)) for f in value.schema.fields()}
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in value.items()}
    return value


def _with_version(schema: Schema, version: int) -> Schema:
    return Schema(schema.type, optional=schema.optional, default=schema.default, name=schema.name,
                  version=version, doc=schema.doc, parameters=schema.parameters,
                  fields=schema.fields() if schema.type is Type.STRUCT else None,
                  key_schema=schema.key_schema, value_schema=schema.value_schema)
