"""ProtobufConverter: payloads from confluent-kafka's own ProtobufSerializer, mapped as ProtobufData does.

The message classes are built at test time from ``FileDescriptorProto`` s
(``descriptor_pool`` + ``message_factory``): no ``protoc`` needed.
"""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from connector.api import Schema, SchemaBuilder, Struct, Type
from connector.api.errors import DataException
from converters import load
from converters.confluent import wire_format
from converters.confluent.protobuf import ProtobufConverter
from converters.confluent.protobuf_data import meta_option_bytes, well_known_files
from converters.confluent.registry_client import SchemaRegistryClient
from tests.confluent import confluent_client, converter, serialization_context, unique

F = descriptor_pb2.FieldDescriptorProto
UTC = dt.timezone.utc
TAG = "io.confluent.connect.protobuf.Tag"


def add(msg, name, number, type_, label=F.LABEL_OPTIONAL, type_name=None, **kw):
    f = msg.field.add(name=name, number=number, type=type_, label=label, **kw)
    if type_name:
        f.type_name = type_name
    return f


def order_file(package: str) -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(name=f"{package}/order.proto", package=package,
                                             syntax="proto3")
    for dep in ("google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto",
                "google/type/date.proto", "google/type/timeofday.proto",
                "confluent/type/decimal.proto", "confluent/meta.proto"):
        fdp.dependency.append(dep)
    status = fdp.enum_type.add(name="Status")
    status.value.add(name="NEW", number=0)
    status.value.add(name="DONE", number=1)
    m = fdp.message_type.add(name="Order")
    add(m, "id", 1, F.TYPE_INT64)
    add(m, "name", 2, F.TYPE_STRING)
    add(m, "qty", 3, F.TYPE_UINT32)
    add(m, "big", 4, F.TYPE_UINT64)
    add(m, "delta", 5, F.TYPE_SINT32)
    add(m, "ratio", 6, F.TYPE_FLOAT)
    add(m, "score", 7, F.TYPE_DOUBLE)
    add(m, "ok", 8, F.TYPE_BOOL)
    add(m, "raw", 9, F.TYPE_BYTES)
    add(m, "at", 10, F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp")
    add(m, "day", 11, F.TYPE_MESSAGE, type_name=".google.type.Date")
    add(m, "tod", 12, F.TYPE_MESSAGE, type_name=".google.type.TimeOfDay")
    price = add(m, "price", 13, F.TYPE_MESSAGE, type_name=".confluent.type.Decimal")
    price.options.MergeFromString(meta_option_bytes({"precision": "8", "scale": "2"}))
    add(m, "note", 14, F.TYPE_MESSAGE, type_name=".google.protobuf.StringValue")
    add(m, "tags", 15, F.TYPE_STRING, F.LABEL_REPEATED)
    add(m, "attrs", 16, F.TYPE_MESSAGE, F.LABEL_REPEATED, f".{package}.Order.AttrsEntry")
    entry = m.nested_type.add(name="AttrsEntry")
    entry.options.map_entry = True
    add(entry, "key", 1, F.TYPE_STRING)
    add(entry, "value", 2, F.TYPE_INT32)
    add(m, "status", 17, F.TYPE_ENUM, type_name=f".{package}.Status")
    add(m, "lines", 18, F.TYPE_MESSAGE, F.LABEL_REPEATED, f".{package}.Order.Line")
    line = m.nested_type.add(name="Line")
    add(line, "sku", 1, F.TYPE_STRING)
    add(line, "count", 2, F.TYPE_INT32)
    add(m, "ship", 19, F.TYPE_MESSAGE, type_name=f".{package}.Order.Line")
    m.oneof_decl.add(name="payment")
    add(m, "card", 20, F.TYPE_STRING, oneof_index=0)
    add(m, "cash", 21, F.TYPE_INT64, oneof_index=0)
    m.oneof_decl.add(name="_maybe")
    add(m, "maybe", 22, F.TYPE_INT32, proto3_optional=True, oneof_index=1)
    tiny = add(m, "tiny", 23, F.TYPE_INT32)
    tiny.options.MergeFromString(meta_option_bytes({"connect.type": "int8"}))
    add(m, "statuses", 24, F.TYPE_ENUM, F.LABEL_REPEATED, type_name=f".{package}.Status")
    other = fdp.message_type.add(name="Other")
    add(other, "x", 1, F.TYPE_INT32)
    inner = other.nested_type.add(name="Inner")
    add(inner, "y", 1, F.TYPE_STRING)
    return fdp


def classes(fdp):
    pool = descriptor_pool.DescriptorPool()
    for f in well_known_files():
        pool.Add(f)
    pool.Add(fdp)
    return lambda name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def serialize(url: str, message, topic: str, **conf) -> bytes:
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    ser = ProtobufSerializer(type(message), confluent_client(url),
                             {"use.deprecated.format": False, **conf})
    return ser(message, serialization_context(topic))


def pb_converter(url: str, **config) -> ProtobufConverter:
    return converter(ProtobufConverter, url, **config)


def sample_order(cls):
    o = cls(id=5, name="x", qty=4_000_000_000, big=2**64 - 1, delta=-3, ratio=0.25, score=1.5,
            ok=True, raw=b"\x01", tags=["a", "b"], status=1, card="visa", tiny=-5, statuses=[1, 0])
    o.at.seconds, o.at.nanos = 1_600_000_000, 123_456_789
    o.day.year, o.day.month, o.day.day = 2020, 2, 29
    o.tod.hours, o.tod.minutes, o.tod.seconds, o.tod.nanos = 13, 14, 15, 16_000_000
    o.price.value = (-12345).to_bytes(2, "big", signed=True)
    o.price.scale = 2
    o.note.value = "hi"
    o.attrs["k"] = 7
    line = o.lines.add()
    line.sku, line.count = "s1", 2
    return o


def test_order_from_confluent_serializer(schema_registry):
    package = unique("shop").replace("-", "_")
    get = classes(order_file(package))
    Order = get(f"{package}.Order")
    topic = unique("pb-order")
    data = serialize(schema_registry.url, sample_order(Order), topic)
    conv = pb_converter(schema_registry.url)
    schema, value = conv.to_connect_data(topic, data)

    assert schema.name == "Order" and schema.version == 1 and not schema.optional
    names = [f.name for f in schema.fields()]
    assert names[0] == "payment_0"  # oneofs come first
    f = {x.name: x.schema for x in schema.fields()}
    assert all(s.optional for s in f.values())
    assert f["id"].type is Type.INT64 and f["id"].parameters == {TAG: "1"}
    assert f["qty"].type is Type.INT64 and f["qty"].parameters == {
        TAG: "3", "io.confluent.connect.protobuf.Type": "uint32"}
    assert f["delta"].type is Type.INT32 and f["delta"].parameters[
        "io.confluent.connect.protobuf.Type"] == "sint32"
    assert f["ratio"].type is Type.FLOAT32 and f["score"].type is Type.FLOAT64
    assert f["ok"].type is Type.BOOLEAN and f["raw"].type is Type.BYTES
    assert f["at"].name == "org.apache.kafka.connect.data.Timestamp"
    assert f["day"].name == "org.apache.kafka.connect.data.Date"
    assert f["tod"].name == "org.apache.kafka.connect.data.Time"
    assert f["price"].name == "org.apache.kafka.connect.data.Decimal"
    assert f["price"].parameters == {"scale": "2", "connect.decimal.precision": "8", TAG: "13"}
    assert f["note"].type is Type.STRUCT and f["note"].name == "StringValue"
    assert f["tags"].type is Type.ARRAY and f["tags"].value_schema == Schema.OPTIONAL_STRING_SCHEMA
    assert f["attrs"].type is Type.MAP and f["attrs"].name == "attrs"
    assert f["attrs"].key_schema.parameters == {TAG: "1"}
    assert f["status"].type is Type.STRING and f["status"].name == "Status"
    assert f["status"].parameters == {"io.confluent.connect.protobuf.Enum": "Status",
                                      "io.confluent.connect.protobuf.Enum.NEW": "0",
                                      "io.confluent.connect.protobuf.Enum.DONE": "1", TAG: "17"}
    assert f["lines"].value_schema.name == "Line" and f["lines"].value_schema.optional
    assert f["payment_0"].name == "io.confluent.connect.protobuf.Union.payment"
    assert [x.name for x in f["payment_0"].fields()] == ["card", "cash"]
    assert f["tiny"].type is Type.INT8

    v = value
    assert v.get("id") == 5 and v.get("name") == "x" and v.get("qty") == 4_000_000_000
    assert v.get("big") == -1  # uint64 max wraps like Java's long
    assert v.get("delta") == -3 and v.get("ratio") == 0.25 and v.get("ok") is True
    assert v.get("raw") == b"\x01"
    assert v.get("at") == dt.datetime(2020, 9, 13, 12, 26, 40, 123000, tzinfo=UTC)
    assert v.get("day") == dt.date(2020, 2, 29)
    assert v.get("tod") == dt.time(13, 14, 15, 16000)
    assert v.get("price") == decimal.Decimal("-123.45")
    assert v.get("note").get("value") == "hi"
    assert v.get("tags") == ["a", "b"] and v.get("attrs") == {"k": 7}
    assert v.get("status") == "DONE" and v.get("statuses") == ["DONE", "NEW"]
    assert v.get("lines")[0].get("sku") == "s1"
    assert v.get("ship") is None  # an unset message field is null
    assert v.get("payment_0").get("card") == "visa" and v.get("payment_0").get("cash") is None
    assert v.get("maybe") is None  # an unset proto3 optional is null
    assert v.get("tiny") == -5
    v.validate()
    assert conv.to_connect_data(topic, data).schema is schema


def test_nested_message_by_indexes(schema_registry):
    package = unique("nest").replace("-", "_")
    get = classes(order_file(package))
    Inner = get(f"{package}.Other.Inner")
    topic = unique("pb-inner")
    data = serialize(schema_registry.url, Inner(y="deep"), topic)
    schema_id, _ = wire_format.parse(data, protobuf=True)
    assert schema_id.message_indexes == (1, 0)
    result = pb_converter(schema_registry.url).to_connect_data(topic, data)
    assert result.schema.name == "Inner" and result.value.get("y") == "deep"
    bad = wire_format.frame(schema_id.id, b"", [5], protobuf=True)
    with pytest.raises(DataException, match="index 5 is out of range"):
        pb_converter(schema_registry.url).to_connect_data(topic, bad)


def test_options(schema_registry):
    package = unique("opts").replace("-", "_")
    get = classes(order_file(package))
    Order = get(f"{package}.Order")
    topic = unique("pb-opts")
    data = serialize(schema_registry.url, sample_order(Order), topic)
    conv = pb_converter(schema_registry.url, int_for_enums="true", wrapper_for_nullables="true",
                        generate_index_for_unions="false", enhanced_protobuf_schema_support="true",
                        optional_for_nullables="true")
    schema, value = conv.to_connect_data(topic, data)
    assert schema.name == f"{package}.Order"
    assert schema.field("status").schema.type is Type.INT32 and value.get("status") == 1
    assert schema.field("note").schema.type is Type.STRING and value.get("note") == "hi"
    assert schema.field("payment").schema.name == \
        f"io.confluent.connect.protobuf.Union.{package}.Order.payment"
    assert not schema.field("id").schema.optional and schema.field("maybe").schema.optional
    flat = pb_converter(schema_registry.url, flatten_unions="true").to_connect_data(topic, data)
    assert flat.value.get("card") == "visa" and flat.schema.field("cash").schema.optional


def test_references_and_top_level_wrappers(schema_registry):
    package = unique("ref").replace("-", "_")
    common = descriptor_pb2.FileDescriptorProto(name=f"{package}/common.proto", package=package,
                                                syntax="proto3")
    money = common.message_type.add(name="Money")
    add(money, "cents", 1, F.TYPE_INT64)
    main = descriptor_pb2.FileDescriptorProto(name=f"{package}/main.proto", package=package,
                                              syntax="proto3")
    main.dependency.append(common.name)
    pay = main.message_type.add(name="Payment")
    add(pay, "amount", 1, F.TYPE_MESSAGE, type_name=f".{package}.Money")
    pool = descriptor_pool.DescriptorPool()
    for f in well_known_files():
        pool.Add(f)
    pool.Add(common)
    pool.Add(main)
    Payment = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Payment"))
    p = Payment()
    p.amount.cents = 250
    topic = unique("pb-ref")
    data = serialize(schema_registry.url, p, topic)
    client = SchemaRegistryClient.from_config({"schema.registry.url": schema_registry.url})
    registered = client.get_schema(wire_format.parse(data, protobuf=True)[0].id)
    assert registered.references and registered.references[0].name == common.name
    result = pb_converter(schema_registry.url).to_connect_data(topic, data)
    assert result.value.get("amount").get("cents") == 250
    assert result.schema.field("amount").schema.name == "Money"

    from google.protobuf import wrappers_pb2

    wrapped = serialize(schema_registry.url, wrappers_pb2.StringValue(value="plain"), unique("pb-w"))
    out = pb_converter(schema_registry.url).to_connect_data("x", wrapped)
    assert out.schema.type is Type.STRING and out.value == "plain"


def test_bad_input(schema_registry):
    package = unique("bad").replace("-", "_")
    get = classes(order_file(package))
    topic = unique("pb-bad")
    data = serialize(schema_registry.url, sample_order(get(f"{package}.Order")), topic)
    conv = pb_converter(schema_registry.url)
    schema_id, _ = wire_format.parse(data, protobuf=True)
    with pytest.raises(DataException, match="does not match message"):
        conv.to_connect_data(topic, wire_format.frame(schema_id.id, b"\x0a\xff\xff", protobuf=True))
    with pytest.raises(DataException, match="Unknown magic byte!"):
        conv.to_connect_data(topic, b"\x09" + data[1:])
    with pytest.raises(DataException, match="Truncated Confluent Protobuf header"):
        conv.to_connect_data(topic, data[:5])
    with pytest.raises(DataException, match="Schema 888888 not found"):
        conv.to_connect_data(topic, wire_format.frame(888888, b"", protobuf=True))
    avro_id = SchemaRegistryClient.from_config({"schema.registry.url": schema_registry.url}).register(
        unique("avro"), '"string"')
    with pytest.raises(DataException, match="is a AVRO schema but the converter expects PROTOBUF"):
        conv.to_connect_data(topic, wire_format.frame(avro_id, b"", protobuf=True))


def test_from_connect_data_round_trip(schema_registry):
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer

    topic = unique("pb-write")
    status = (SchemaBuilder.string().name("Status").optional()
              .parameter("io.confluent.connect.protobuf.Enum", "Status")
              .parameter("io.confluent.connect.protobuf.Enum.NEW", "0")
              .parameter("io.confluent.connect.protobuf.Enum.DONE", "1").build())
    union = (SchemaBuilder.struct().name("io.confluent.connect.protobuf.Union.pay").optional()
             .field("card", SchemaBuilder.string().optional().parameter(TAG, "20").build())
             .field("cash", SchemaBuilder.int64().optional().parameter(TAG, "21").build()).build())
    schema = (SchemaBuilder.struct().name("shopw.Order")
              .field("pay_0", union)
              .field("id", Schema.OPTIONAL_INT64_SCHEMA)
              .field("tiny", Schema.OPTIONAL_INT8_SCHEMA)
              .field("at", SchemaBuilder.int64().name("org.apache.kafka.connect.data.Timestamp")
                     .version(1).optional().build())
              .field("day", SchemaBuilder.int32().name("org.apache.kafka.connect.data.Date")
                     .version(1).optional().build())
              .field("tod", SchemaBuilder.int32().name("org.apache.kafka.connect.data.Time")
                     .version(1).optional().build())
              .field("price", SchemaBuilder.bytes().name("org.apache.kafka.connect.data.Decimal")
                     .version(1).parameter("scale", "2").optional().build())
              .field("tags", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build())
              .field("attrs", SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA,
                                                Schema.OPTIONAL_INT32_SCHEMA).optional().build())
              .field("lines", SchemaBuilder.array(SchemaBuilder.struct().name("Line").optional()
                                                  .field("sku", Schema.OPTIONAL_STRING_SCHEMA)
                                                  .build()).optional().build())
              .field("status", status)
              .build())
    elem = schema.field("lines").schema.value_schema
    value = (Struct(schema).put("pay_0", Struct(union).put("cash", 3)).put("id", 9).put("tiny", -2)
             .put("at", dt.datetime(2021, 1, 1, 0, 0, 0, 5000, tzinfo=UTC))
             .put("day", dt.date(1999, 12, 31)).put("tod", dt.time(1, 2, 3, 4000))
             .put("price", decimal.Decimal("-0.05")).put("tags", ["a"]).put("attrs", {"k": 1})
             .put("lines", [Struct(elem).put("sku", "s")]).put("status", "DONE"))
    conv = pb_converter(schema_registry.url)
    data = conv.from_connect_data(topic, schema, value)
    back = conv.to_connect_data(topic, data)
    assert back.value.get("pay_0").get("cash") == 3 and back.value.get("tiny") == -2
    assert back.value.get("at") == value.get("at") and back.value.get("day") == value.get("day")
    assert back.value.get("tod") == value.get("tod") and back.value.get("price") == value.get("price")
    assert back.value.get("tags") == ["a"] and back.value.get("attrs") == {"k": 1}
    assert back.value.get("lines")[0].get("sku") == "s" and back.value.get("status") == "DONE"
    assert back.schema.field("tiny").schema.type is Type.INT8
    assert back.schema.field("pay_0").schema.field("cash").schema.parameters[TAG] == "21"
    # confluent-kafka's deserializer reads it with its own pool
    from google.protobuf import descriptor_pb2 as d2

    registered = SchemaRegistryClient.from_config({"schema.registry.url": schema_registry.url}) \
        .get_schema(conv.last_schema_id, fmt="serialized")
    fdp = d2.FileDescriptorProto.FromString(__import__("base64").b64decode(registered.schema))
    Order = classes(fdp)("shopw.Order")
    msg = ProtobufDeserializer(Order, {"use.deprecated.format": False},
                               confluent_client(schema_registry.url))(data,
                                                                      serialization_context(topic))
    assert msg.cash == 3 and msg.status == 1 and msg.lines[0].sku == "s"


def test_loaded_by_connect_class_name(schema_registry):
    conv = load("io.confluent.connect.protobuf.ProtobufConverter",
                {"schema.registry.url": schema_registry.url})
    assert isinstance(conv, ProtobufConverter)


def test_use_latest_version(schema_registry):
    package = unique("latest").replace("-", "_")

    def version(with_b: bool):
        fdp = descriptor_pb2.FileDescriptorProto(name=f"{package}/m.proto", package=package,
                                                 syntax="proto3")
        m = fdp.message_type.add(name="M")
        add(m, "a", 1, F.TYPE_INT32)
        if with_b:
            add(m, "b", 2, F.TYPE_STRING)
        return classes(fdp)(f"{package}.M")

    topic = unique("pb-latest")
    d1 = serialize(schema_registry.url, version(False)(a=1), topic)
    d2 = serialize(schema_registry.url, version(True)(a=2, b="y"), topic)
    conv = pb_converter(schema_registry.url, use_latest_version="true")
    result = conv.to_connect_data(topic, d1)
    assert result.schema.version == 2 and [f.name for f in result.schema.fields()] == ["a", "b"]
    assert result.value.get("a") == 1 and result.value.get("b") == ""
    # writing with use.latest.version encodes with the latest schema's message
    data = conv.from_connect_data(topic, result.schema, result.value)
    assert wire_format.schema_id_of(data) == wire_format.schema_id_of(d2)
    assert pb_converter(schema_registry.url).to_connect_data(topic, data).value.get("a") == 1
