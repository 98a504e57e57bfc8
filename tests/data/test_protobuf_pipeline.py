"""The columnar Protobuf strategy gives the per-record strategy's tables (Confluent Protobuf, a real registry).

Message classes are built from ``FileDescriptorProto`` s at test time (no ``protoc``) and
serialized by confluent-kafka's own ``ProtobufSerializer``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from connector.api.declined import Declined
from converters.batch.protobuf import ProtobufBatchReader, _wrapped_payloads
from converters.confluent.protobuf import ProtobufConverter
from converters.confluent.protobuf_data import meta_option_bytes, well_known_files
from tests.confluent import confluent_client, converter, serialization_context, unique
from tests.smt_batch.harness import per_record_and_columnar, raw_batch, sink_props
from tests.smt_batch.test_pipeline import assert_same_tables

PROTOBUF = "io.confluent.connect.protobuf.ProtobufConverter"
STRATEGY = "columnar Protobuf"
F = descriptor_pb2.FieldDescriptorProto


def _add(message, name, number, type_, label=F.LABEL_OPTIONAL, type_name=None, **kw):
    field = message.field.add(name=name, number=number, type=type_, label=label, **kw)
    if type_name:
        field.type_name = type_name
    return field


def _event_file(package: str, *, extra: bool = False, with_map: bool = False, with_decimal: bool = False):
    """``Event``: scalars of every kind, an enum, nested and repeated messages, wrappers, a oneof, dates."""
    fdp = descriptor_pb2.FileDescriptorProto(name=f"{package}/event.proto", package=package, syntax="proto3")
    for dep in ("google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto", "google/type/date.proto",
                "confluent/meta.proto", "confluent/type/decimal.proto"):
        fdp.dependency.append(dep)
    kind = fdp.enum_type.add(name="Kind")
    for number, name in enumerate(("A", "B", "C")):
        kind.value.add(name=name, number=number)
    place = fdp.message_type.add(name="Place")
    _add(place, "city", 1, F.TYPE_STRING)
    place.oneof_decl.add(name="_zip")
    _add(place, "zip", 2, F.TYPE_INT32, proto3_optional=True, oneof_index=0)
    m = fdp.message_type.add(name="Event")
    for number, (name, type_) in enumerate((
            ("id", F.TYPE_INT64), ("name", F.TYPE_STRING), ("amount", F.TYPE_DOUBLE), ("score", F.TYPE_FLOAT),
            ("count", F.TYPE_INT32), ("active", F.TYPE_BOOL), ("blob", F.TYPE_BYTES), ("big", F.TYPE_UINT64),
            ("qty", F.TYPE_UINT32), ("delta", F.TYPE_SINT32)), 1):
        _add(m, name, number, type_)
    tiny = _add(m, "tiny", 11, F.TYPE_INT32)
    tiny.options.MergeFromString(meta_option_bytes({"connect.type": "int8"}))
    m.oneof_decl.add(name="payment")
    _add(m, "card", 12, F.TYPE_STRING, oneof_index=0)
    _add(m, "cash", 13, F.TYPE_INT64, oneof_index=0)
    m.oneof_decl.add(name="_maybe")
    _add(m, "maybe", 14, F.TYPE_INT32, proto3_optional=True, oneof_index=1)
    _add(m, "kind", 15, F.TYPE_ENUM, type_name=f".{package}.Kind")
    _add(m, "kinds", 16, F.TYPE_ENUM, F.LABEL_REPEATED, type_name=f".{package}.Kind")
    _add(m, "tags", 17, F.TYPE_STRING, F.LABEL_REPEATED)
    _add(m, "ids", 18, F.TYPE_INT64, F.LABEL_REPEATED)
    _add(m, "where", 19, F.TYPE_MESSAGE, type_name=f".{package}.Place")
    _add(m, "places", 20, F.TYPE_MESSAGE, F.LABEL_REPEATED, type_name=f".{package}.Place")
    _add(m, "note", 21, F.TYPE_MESSAGE, type_name=".google.protobuf.StringValue")
    _add(m, "total", 22, F.TYPE_MESSAGE, type_name=".google.protobuf.UInt64Value")
    _add(m, "at", 23, F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp")
    _add(m, "day", 24, F.TYPE_MESSAGE, type_name=".google.type.Date")
    if extra:  # a later version adds a field: the table evolves (per record), then the columnar path takes over
        _add(m, "extra", 25, F.TYPE_INT64)
    if with_map:
        _add(m, "attrs", 26, F.TYPE_MESSAGE, F.LABEL_REPEATED, f".{package}.Event.AttrsEntry")
        entry = m.nested_type.add(name="AttrsEntry")
        entry.options.map_entry = True
        _add(entry, "key", 1, F.TYPE_STRING)
        _add(entry, "value", 2, F.TYPE_INT32)
    if with_decimal:
        _add(m, "price", 27, F.TYPE_MESSAGE, type_name=".confluent.type.Decimal")
    return fdp


def _event_class(package: str, **shape):
    pool = descriptor_pool.DescriptorPool()
    for file in well_known_files():
        pool.Add(file)
    pool.Add(_event_file(package, **shape))
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Event"))


def _serializer(url: str, cls):
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    serializer = ProtobufSerializer(cls, confluent_client(url), {"use.deprecated.format": False})
    return lambda message, topic: serializer(message, serialization_context(topic))


int32s = st.integers(-(2**31), 2**31 - 1)
places = st.fixed_dictionaries({"city": st.text(max_size=4), "zip": st.none() | int32s})
events = st.fixed_dictionaries({
    "id": st.integers(-(2**63), 2**63 - 1), "name": st.text(max_size=8),
    "amount": st.floats(allow_nan=False), "score": st.floats(width=32, allow_nan=False), "count": int32s,
    "active": st.booleans(), "blob": st.binary(max_size=4), "big": st.integers(0, 2**64 - 1),
    "qty": st.integers(0, 2**32 - 1), "delta": int32s, "tiny": int32s,
    "payment": st.none() | st.tuples(st.just("card"), st.text(max_size=3)) | st.tuples(st.just("cash"), st.integers(
        -(2**63), 2**63 - 1)),
    "maybe": st.none() | int32s, "kind": st.integers(0, 3),  # 3: a number the enum does not name (proto3: kept)
    "kinds": st.lists(st.integers(0, 2), max_size=3), "tags": st.lists(st.text(max_size=3), max_size=3),
    "ids": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3), "where": st.none() | places,
    "places": st.lists(places, max_size=2), "note": st.none() | st.text(max_size=3),
    "total": st.none() | st.integers(0, 2**64 - 1),
    "at": st.none() | st.tuples(st.integers(-62_135_596_800, 253_402_300_799), st.integers(0, 999_999_999)),
    "day": st.none() | st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)),
})


def _message(cls, value: dict, **more):
    """An Event message of ``value`` (as ``events`` draws it)."""
    message = cls(**{k: value[k] for k in ("id", "name", "amount", "score", "count", "active", "blob", "big", "qty",
                                           "delta", "tiny", "kind", "kinds", "tags", "ids")}, **more)
    if value["payment"] is not None:
        setattr(message, *value["payment"])
    if value["maybe"] is not None:
        message.maybe = value["maybe"]
    for place, target in [(value["where"], lambda: message.where)] + [(p, message.places.add) for p in value["places"]]:
        if place is not None:
            built = target()
            built.city = place["city"]
            if place["zip"] is not None:
                built.zip = place["zip"]
    if value["where"] is not None and not value["where"]["city"] and value["where"]["zip"] is None:
        message.where.SetInParent()  # an empty but set message
    if value["note"] is not None:
        message.note.value = value["note"]
    if value["total"] is not None:
        message.total.value = value["total"]
    if value["at"] is not None:
        message.at.seconds, message.at.nanos = value["at"]
    if value["day"] is not None:
        message.day.year, message.day.month, message.day.day = value["day"].year, value["day"].month, value["day"].day
    return message


def _props(root: Path, url: str, **extra: str) -> dict[str, str]:
    return {**sink_props(root), "value.converter": PROTOBUF, "value.converter.schema.registry.url": url, **extra}


def _both(url: str, batches, **extra: str):
    """(per-record outcome, columnar outcome and pipeline), each on its own catalog."""
    return per_record_and_columnar(lambda root: _props(root, url, **extra), batches)


OPTIONS = [{}, {"value.converter.wrapper.for.nullables": "true"},
           {"value.converter.int.for.enums": "true", "value.converter.flatten.unions": "true"},
           {"value.converter.generate.struct.for.nulls": "true",
            "value.converter.enhanced.protobuf.schema.support": "true"}]


def _fit(value: dict, options: dict) -> dict:
    """``value`` with what the converter's ``options`` would refuse per record set (so most batches convert):
    ``wrapper.for.nullables`` makes proto3 ``optional`` scalars required, ``generate.struct.for.nulls`` reads an
    unset date as 0-0-0."""
    if "value.converter.wrapper.for.nullables" in options:
        def place(p):
            return None if p is None else {**p, "zip": p["zip"] or 0}

        value = {**value, "maybe": value["maybe"] or 0, "where": place(value["where"]),
                 "places": [place(p) for p in value["places"]]}
    if "value.converter.generate.struct.for.nulls" in options:
        value = {**value, "day": value["day"] or dt.date(2000, 1, 1)}
    return value


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(events, st.none()), min_size=1, max_size=12), evolve=st.booleans(),
       options=st.sampled_from(OPTIONS))
def test_columnar_protobuf_equals_per_record(schema_registry, values, evolve, options):
    topic = unique("pb-cols")
    package = topic.replace("-", "_")
    confluent_client(schema_registry.url).set_compatibility(f"{topic}-value", "NONE")
    v1_class, v2_class = _event_class(package), _event_class(package, extra=True)
    first, later = _serializer(schema_registry.url, v1_class), _serializer(schema_registry.url, v2_class)
    values = [None if v is None else _fit(v, options) for v in values]
    v1 = [None if v is None else first(_message(v1_class, v), topic) for v in values]
    v2 = [None if v is None else later(_message(v2_class, v, extra=7), topic) for v in values]
    batches = [raw_batch(v1, topic=topic), raw_batch(v1, topic=topic, first_offset=len(v1)),
               raw_batch(v2, topic=topic, first_offset=2 * len(v1))]
    extra = {"iceberg.tables.evolve-schema-enabled": "true"} if evolve else {}
    (expected, _), (got, pipeline) = _both(schema_registry.url, batches, **extra, **options)
    assert_same_tables(expected, got)
    if pipeline is not None:
        assert pipeline.path == STRATEGY
        event(f"columnar batches: {pipeline.batches['columnar']}")


BASE = {"id": 1, "name": "a", "amount": 1.5, "score": 0.5, "count": 3, "active": True, "blob": b"\x00",
        "big": 2**64 - 1, "qty": 2**32 - 1, "delta": -2, "tiny": 200, "payment": ("card", "visa"), "maybe": None,
        "kind": 1, "kinds": [2, 0], "tags": ["x"], "ids": [], "where": {"city": "Oslo", "zip": None},
        "places": [{"city": "Rome", "zip": 7}], "note": "n", "total": 2**63, "at": (1_700_000_000, 123_456_789),
        "day": dt.date(2024, 2, 29)}


def _run(url: str, values: list[dict], *, batches: int = 2, shape: dict | None = None, **extra: str):
    topic = unique("pb")
    cls = _event_class(topic.replace("-", "_"), **(shape or {}))
    serialize = _serializer(url, cls)
    framed = [serialize(_message(cls, v), topic) for v in values]
    raw = [raw_batch(framed, topic=topic, first_offset=i * len(framed)) for i in range(batches)]
    (expected, _), (got, pipeline) = _both(url, raw, **extra)
    assert_same_tables(expected, got)
    return pipeline, framed


def _declines(pipeline) -> set[str]:
    return {k for k in pipeline.batches if k.startswith("declined: ") and k != "declined: table to create"}


def test_a_batch_of_one_message_type_is_read_column_wise_after_the_table_exists(schema_registry):
    pipeline, _ = _run(schema_registry.url, [{**BASE, "id": i} for i in range(100)], batches=2)
    assert pipeline.path == STRATEGY
    # the first attempt asks for the table (per record); once it exists, every batch is columnar
    assert pipeline.batches == {"declined: table to create": 1, "per-record": 1, "columnar": 2}, pipeline.batches


def test_schema_features_without_an_exact_column_decline_with_a_reason(schema_registry):
    pipeline, framed = _run(schema_registry.url, [BASE], shape={"with_map": True})
    schema_id = int.from_bytes(framed[0][1:5], "big")
    assert _declines(pipeline) == {f"declined: schema {schema_id} has a map field attrs"}, pipeline.batches
    pipeline, framed = _run(schema_registry.url, [BASE], shape={"with_decimal": True})
    schema_id = int.from_bytes(framed[0][1:5], "big")
    assert _declines(pipeline) == {f"declined: schema {schema_id} has a Decimal field price"}, pipeline.batches


def _decode(url: str, topic: str, values: list[bytes]):
    """The columnar reader's result for ``values`` (a batch of ``topic``)."""
    reader = ProtobufBatchReader(converter(ProtobufConverter, url))
    return reader.decode(topic, pa.array(values, pa.binary()), raw_batch([None], topic=topic).column("headers"))


@pytest.mark.parametrize("change, reason", [
    (lambda m: setattr(m.at, "seconds", 253_402_300_800), "a timestamp beyond the years 1-9999 in field at"),
    (lambda m: setattr(m.at, "seconds", -62_135_596_801), "a timestamp beyond the years 1-9999 in field at"),
    (lambda m: setattr(m.day, "month", 13), "a google.type.Date that is no calendar date in field day"),
    (lambda m: setattr(m.day, "year", 0), "a google.type.Date that is no calendar date in field day"),
])
def test_values_without_an_exact_column_decline_with_a_reason(schema_registry, change, reason):
    topic = unique("pb-value")
    cls = _event_class(topic.replace("-", "_"))
    message = _message(cls, BASE)
    change(message)
    values = [_serializer(schema_registry.url, cls)(_message(cls, BASE), topic),
              _serializer(schema_registry.url, cls)(message, topic)]
    with pytest.raises(Declined) as declined:
        _decode(schema_registry.url, topic, values)
    assert declined.value.reason == reason
    # and the pipeline gives what per record gives (here: the error)
    (expected, _), (got, _) = _both(schema_registry.url, [raw_batch(values, topic=topic)] * 2)
    assert got == expected and expected[0] == "error"


def test_payloads_the_runtime_refuses_and_mixed_message_types_decline(schema_registry):
    topic = unique("pb-bad")
    cls = _event_class(topic.replace("-", "_"))
    good = _serializer(schema_registry.url, cls)(_message(cls, BASE), topic)
    assert good[5:7] == b"\x02\x02"  # message indexes [1]: Event is the file's second message
    with pytest.raises(Declined, match="payloads the protobuf runtime does not parse as"):
        _decode(schema_registry.url, topic, [good, good[:-3]])
    place = good[:5] + b"\x00" + good[7:]  # message indexes [0]: the same bytes as a Place
    with pytest.raises(Declined, match="several message types in one batch"):
        _decode(schema_registry.url, topic, [good, place])
    (expected, _), (got, _) = _both(schema_registry.url, [raw_batch([good, good[:-3]], topic=topic)])
    assert got == expected and expected[0] == "error"


def test_values_read_as_another_schema_decline(schema_registry):
    url = schema_registry.url
    topic = unique("pb-latest")
    package = topic.replace("-", "_")
    confluent_client(url).set_compatibility(f"{topic}-value", "NONE")
    v1, v2 = _event_class(package), _event_class(package, extra=True)
    old = _serializer(url, v1)(_message(v1, BASE), topic)
    _serializer(url, v2)(_message(v2, BASE, extra=1), topic)  # a newer version of the subject
    (expected, _), (got, pipeline) = _both(url, [raw_batch([old], topic=topic)] * 2,
                                           **{"value.converter.use.latest.version": "true",
                                              "value.converter.auto.register.schemas": "false"})
    assert_same_tables(expected, got)
    assert _declines(pipeline) == {"declined: values need the converter (DataException)"}


def test_typed_smt_chains_run_column_wise_on_protobuf_values(schema_registry):
    chain = {"transforms": "insert,rename,mask",
             "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
             "transforms.insert.static.field": "source", "transforms.insert.static.value": "bench",
             "transforms.rename.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
             "transforms.rename.renames": "name:customer",
             "transforms.mask.type": "org.apache.kafka.connect.transforms.MaskField$Value",
             "transforms.mask.fields": "amount"}
    pipeline, _ = _run(schema_registry.url, [{**BASE, "id": i} for i in range(50)], batches=3, **chain)
    assert pipeline.path == STRATEGY + " with batch SMTs"
    assert pipeline.batches["columnar"] == 3, pipeline.batches


@pytest.mark.parametrize("lengths", [[0], [1, 127, 128, 16_383, 16_384, 3_000_000], []])
def test_the_wrapper_buffer_is_each_payload_as_a_length_delimited_field(lengths):
    from google.protobuf.internal.encoder import _VarintBytes

    payloads = [bytes([i % 251]) * n for i, n in enumerate(lengths)]
    values = pa.array([b"\x00\x00\x00\x00\x07\x00" + p for p in payloads], pa.binary())
    want = b"".join(b"\x0a" + _VarintBytes(len(p)) + p for p in payloads)
    assert _wrapped_payloads(values, 6) == want
    if len(values) > 1:
        assert _wrapped_payloads(values.slice(1), 6) == want[len(b"\x0a" + _VarintBytes(0) + payloads[0]):]
