"""Schema evolution for Connect schemas from a Schema Registry: properties and the pieces behind them.

The property: any sequence of compatible schema versions (fields added at any
depth — inside structs, list elements and map values — int32 → int64 and
float32 → float64 widened, required fields made optional, fields dropped)
evolves a table whose every record, old and new, reads back as written.

The rest pins what the property relies on: the registry schema ids the
decoder records, list element / map value evolution, dropped fields becoming
optional, incompatible changes failing with the table, column, types and
schema ids, and the provenance the table keeps.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
    UUIDType,
)

import converters
from connector.api import Schema, SchemaBuilder, Struct
from connector.api.logical import Decimal as ConnectDecimal
from connector.api.logical import Timestamp as ConnectTimestamp
from connector.data.convert.record_converter import (
    RecordConversionError,
    RecordConverter,
    conversion_conflict,
    registry_schema_note,
)
from connector.data.convert.schema_update import (
    IncompatibleSchemaChange,
    SchemaUpdates,
    apply_schema_updates,
    iceberg_schema_property,
    registry_ids_of_column,
    topic_schema_ids_property,
)
from connector.data.convert.type_mapping import iceberg_schema_for
from connector.data.decoder import RecordConversionFailed, RecordDecoder
from connector.data.schema_ids import RegistrySchemaIds
from tests.data.conftest import make_catalog


def req(field_id, name, type_):
    return NestedField(field_id, name, type_, required=True)


def opt(field_id, name, type_):
    return NestedField(field_id, name, type_, required=False)


# === the property ==================================================================================

PRIMITIVES = ("int32", "int64", "float32", "float64", "string", "boolean")


@dataclass
class Node:
    """A Connect schema in the making: a primitive, a struct, an array or a map (string keys)."""

    kind: str
    fields: list["Fld"] = field(default_factory=list)  # struct
    item: "Node | None" = None  # array element / map value
    item_optional: bool = False


@dataclass
class Fld:
    name: str
    node: Node
    optional: bool


def copy_node(node: Node) -> Node:
    return Node(node.kind, [Fld(f.name, copy_node(f.node), f.optional) for f in node.fields],
                copy_node(node.item) if node.item else None, node.item_optional)


def draw_node(data, depth: int, names) -> Node:
    kind = data.draw(st.sampled_from(PRIMITIVES + (("struct", "array", "map") if depth > 0 else ())))
    if kind == "struct":
        return Node("struct", [draw_field(data, depth - 1, names) for _ in range(data.draw(st.integers(1, 3)))])
    if kind in ("array", "map"):
        return Node(kind, item=draw_node(data, depth - 1, names), item_optional=data.draw(st.booleans()))
    return Node(kind)


def draw_field(data, depth: int, names) -> Fld:
    return Fld(next(names), draw_node(data, depth, names), data.draw(st.booleans()))


def walk(node: Node):
    """(kind, holder) for every struct, field and list element / map value, depth first."""
    if node.kind == "struct":
        yield "struct", node
        for fld in node.fields:
            yield "field", fld
            yield from walk(fld.node)
    elif node.kind in ("array", "map"):
        yield "item", node
        yield from walk(node.item)


def mutate(data, root: Node, names) -> str:
    """Apply one random compatible change to ``root``; what it did."""
    spots = list(walk(root))
    structs = [holder for kind, holder in spots if kind == "struct"]
    droppable = [s for s in structs if len(s.fields) > 1]
    widenable = [(kind, holder) for kind, holder in spots
                 if kind in ("field", "item")
                 and (holder.node if kind == "field" else holder.item).kind in ("int32", "float32")]
    required = [(kind, holder) for kind, holder in spots
                if (kind == "field" and not holder.optional and holder.name != "id")
                or (kind == "item" and not holder.item_optional)]
    choices = ["add"] + ["drop"] * bool(droppable) + ["widen"] * bool(widenable) + ["optional"] * bool(required)
    change = data.draw(st.sampled_from(choices))
    if change == "add":
        struct = data.draw(st.sampled_from(structs))
        struct.fields.append(draw_field(data, 1, names))
    elif change == "drop":
        struct = data.draw(st.sampled_from(droppable))
        struct.fields.pop(data.draw(st.sampled_from([i for i, f in enumerate(struct.fields) if f.name != "id"])))
    elif change == "widen":
        kind, holder = data.draw(st.sampled_from(widenable))
        node = holder.node if kind == "field" else holder.item
        node.kind = {"int32": "int64", "float32": "float64"}[node.kind]
    else:
        kind, holder = data.draw(st.sampled_from(required))
        if kind == "field":
            holder.optional = True
        else:
            holder.item_optional = True
    return change


def connect_schema(node: Node, optional: bool = False) -> Schema:
    if node.kind == "struct":
        builder = SchemaBuilder.struct()
        for fld in node.fields:
            builder.field(fld.name, connect_schema(fld.node, fld.optional))
    elif node.kind == "array":
        builder = SchemaBuilder.array(connect_schema(node.item, node.item_optional))
    elif node.kind == "map":
        builder = SchemaBuilder.map(Schema.STRING_SCHEMA, connect_schema(node.item, node.item_optional))
    else:
        builder = {"int32": SchemaBuilder.int32, "int64": SchemaBuilder.int64, "float32": SchemaBuilder.float32,
                   "float64": SchemaBuilder.float64, "string": SchemaBuilder.string,
                   "boolean": SchemaBuilder.bool}[node.kind]()
    if optional:
        builder.optional()
    return builder.build()


PRIMITIVE_VALUES = {
    "int32": st.integers(-2**31, 2**31 - 1),
    "int64": st.integers(-2**63, 2**63 - 1),
    "float32": st.integers(-4000, 4000).map(lambda k: k / 4),  # exact in float32
    "float64": st.floats(allow_nan=False, allow_infinity=False),
    "string": st.text(max_size=4),
    "boolean": st.booleans(),
}


def draw_value(data, node: Node, optional: bool):
    if optional and data.draw(st.integers(0, 3)) == 0:
        return None
    if node.kind == "struct":
        return {fld.name: draw_value(data, fld.node, fld.optional) for fld in node.fields}
    if node.kind == "array":
        return [draw_value(data, node.item, node.item_optional) for _ in range(data.draw(st.integers(0, 2)))]
    if node.kind == "map":
        keys = data.draw(st.lists(st.text(max_size=3), max_size=2, unique=True))
        return {key: draw_value(data, node.item, node.item_optional) for key in keys}
    return data.draw(PRIMITIVE_VALUES[node.kind])


def connect_value(schema: Schema, plain):
    if plain is None:
        return None
    if schema.type.name == "STRUCT":
        struct = Struct(schema)
        for fld in schema.fields():
            struct.put(fld.name, connect_value(fld.schema, plain[fld.name]))
        return struct
    if schema.type.name == "ARRAY":
        return [connect_value(schema.value_schema, v) for v in plain]
    if schema.type.name == "MAP":
        return {k: connect_value(schema.value_schema, v) for k, v in plain.items()}
    return plain


def _null_reads_empty(type_):
    """pyiceberg 0.12 writes (and reads) a null list of structs as ``[]`` and a null map of structs as
    ``{}``: its Arrow projection rebuilds them from their offsets alone, dropping the validity
    (``ArrowProjectionVisitor.list``/``.map`` in pyiceberg/io/pyarrow.py). None for other types."""
    if isinstance(type_, ListType) and isinstance(type_.element_type, StructType):
        return []
    if isinstance(type_, MapType) and isinstance(type_.value_type, StructType):
        return {}
    return None


def expected(plain, type_):
    """A written value as the final table reads it: columns it never had are null."""
    if plain is None:
        return _null_reads_empty(type_)
    if isinstance(type_, StructType):
        return {f.name: expected(plain.get(f.name), f.field_type) for f in type_.fields}
    if isinstance(type_, ListType):
        return [expected(v, type_.element_type) for v in plain]
    if isinstance(type_, MapType):
        return {k: expected(v, type_.value_type) for k, v in plain.items()}
    return plain


def read_back(value, type_):
    """A row from Arrow, with maps (lists of pairs there) as dicts."""
    if value is None:
        return _null_reads_empty(type_)
    if isinstance(type_, StructType):
        return {f.name: read_back(value[f.name], f.field_type) for f in type_.fields}
    if isinstance(type_, ListType):
        return [read_back(v, type_.element_type) for v in value]
    if isinstance(type_, MapType):
        return {k: read_back(v, type_.value_type) for k, v in value}
    return value


@pytest.fixture(scope="module")
def shared_catalog(tmp_path_factory) -> Catalog:
    catalog = make_catalog(tmp_path_factory.mktemp("evolution"))
    catalog.create_namespace("db")
    return catalog


_tables = itertools.count()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_compatible_schema_sequences_evolve_the_table_and_every_record_stays_readable(shared_catalog, data):
    names = (f"f{i}" for i in itertools.count())
    root = Node("struct", [Fld("id", Node("int64"), False)]
                + [draw_field(data, 2, names) for _ in range(data.draw(st.integers(1, 3)))])
    versions = [copy_node(root)]
    for _ in range(data.draw(st.integers(1, 4))):
        for _ in range(data.draw(st.integers(1, 2))):
            mutate(data, root, names)
        versions.append(copy_node(root))
    name = f"db.prop_{next(_tables)}"
    table = shared_catalog.create_table(name, iceberg_schema_for(connect_schema(versions[0])))
    written = []
    for spec in versions:
        schema = connect_schema(spec)
        plain = [draw_value(data, spec, False) for _ in range(data.draw(st.integers(1, 3)))]
        for value in plain:
            value["id"] = len(written)
            written.append(value)
        structs = [connect_value(schema, value) for value in plain]
        for _ in range(10):  # a struct made optional is looked into the round after (as in Java)
            result = RecordConverter(table.schema(), evolve=True).convert(structs)
            if not result.updates:
                break
            assert apply_schema_updates(table, result.updates)
            table = shared_catalog.load_table(name)
        else:
            pytest.fail(f"no fixed point for {schema}")
        table.append(result.table)

    final = table.schema().as_struct()
    rows = {row["id"]: read_back(row, final) for row in table.scan().to_arrow().to_pylist()}
    assert rows == {value["id"]: expected(value, final) for value in written}


# === registry schema ids of decoded records ===========================================================


def test_schema_ids_are_kept_as_runs_and_replaced_when_a_partition_is_read_again() -> None:
    ids = RegistrySchemaIds()
    for offset in range(10):
        ids.record("t", 0, offset, 1 if offset < 5 else 2)
    ids.record("t", 1, 0, None)
    assert [ids.get("t", 0, o) for o in (0, 4, 5, 9)] == [1, 1, 2, 2]
    assert ids.get("t", 0, 10) is None and ids.get("t", 1, 0) is None and ids.get("u", 0, 0) is None
    assert len(ids._runs[("t", 0)].starts) == 2
    for offset in range(3, 6):  # a re-run from offset 3, now all id 7
        ids.record("t", 0, offset, 7)
    assert [ids.get("t", 0, o) for o in (2, 3, 5, 6)] == [1, 7, 7, None]


def _avro_value(url: str, topic: str, schema: dict, value: dict) -> bytes:
    from confluent_kafka.schema_registry.avro import AvroSerializer

    from tests.confluent import confluent_client, serialization_context

    return AvroSerializer(confluent_client(url), json.dumps(schema))(value, serialization_context(topic))


def _decoder(url: str) -> RecordDecoder:
    return RecordDecoder(
        converters.load("org.apache.kafka.connect.storage.StringConverter", {}, is_key=True),
        converters.load("io.confluent.connect.avro.AvroConverter", {"schema.registry.url": url}),
        converters.load_header_converter("org.apache.kafka.connect.storage.SimpleHeaderConverter", {}),
        schemaless_json_value=False,
    )


def test_decoder_remembers_each_values_registry_schema_id(schema_registry) -> None:
    from tests.confluent import unique

    topic = unique("ids")
    v1 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
    v2 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]}
    raw = [_avro_value(schema_registry.url, topic, v1, {"a": 1}), _avro_value(schema_registry.url, topic, v2, {"a": 2})]
    decoder = _decoder(schema_registry.url)
    first, second = (decoder.decode(topic, 0, offset, None, 0, None, value, None) for offset, value in enumerate(raw))

    id1, id2 = (decoder.value_schema_id(value) for value in raw)
    assert id1 != id2 and decoder.tracks_schema_ids
    assert decoder.schema_ids.of_record(first) == id1 and decoder.schema_ids.of_record(second) == id2
    routed = second.new_record("elsewhere", 3, None, None, second.value_schema, second.value, None)
    assert decoder.schema_ids.of_record(routed) == id2  # by the original coordinates: SMTs don't matter
    assert decoder.schema_ids.of_schema(first.value_schema) == (topic, id1)
    assert decoder.schema_ids.of_schema(second.value_schema) == (topic, id2)
    assert registry_schema_note(second.value_schema, decoder.schema_ids).registry_schema_ids == {topic: [id2]}

    with pytest.raises(RecordConversionFailed) as failure:
        decoder.decode(topic, 0, 2, None, 0, None, raw[1][:5] + b"\xff" * 9, None)
    assert f"topic: {topic}, partition: 0, offset: 2, value schema id: {id2}:" in str(failure.value)


# === evolution of Connect schemas beyond the Java sink =====================================================


def test_list_elements_and_map_values_widen_and_become_optional(catalog: Catalog) -> None:
    table = catalog.create_table("db.items", IcebergSchema(
        req(1, "id", LongType()),
        req(2, "li", ListType(3, IntegerType(), element_required=True)),
        req(4, "ma", MapType(5, StringType(), 6, FloatType(), value_required=True)),
    ))
    schema = (SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA)
              .field("li", SchemaBuilder.array(Schema.OPTIONAL_INT64_SCHEMA).build())
              .field("ma", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.FLOAT64_SCHEMA).build()).build())
    value = Struct(schema).put("id", 1).put("li", [2**40, None]).put("ma", {"k": 0.1})

    updates = RecordConverter(table.schema(), evolve=True).convert([value]).updates
    assert {(u.name, u.type) for u in updates.update_types} == {("li.element", LongType()), ("ma.value", DoubleType())}
    assert [m.name for m in updates.make_optionals] == ["li.element"]
    assert apply_schema_updates(table, updates)
    evolved = catalog.load_table("db.items").schema()
    li, ma = evolved.find_field("li").field_type, evolved.find_field("ma").field_type
    assert (li.element_type, li.element_required, ma.value_type, ma.value_required) == (
        LongType(), False, DoubleType(), True)
    converted = RecordConverter(evolved, evolve=True).convert([value])
    assert converted.table.to_pylist() == [{"id": 1, "li": [2**40, None], "ma": [("k", 0.1)]}]


def test_a_dropped_required_field_becomes_optional_at_any_depth(catalog: Catalog) -> None:
    element = StructType(req(4, "sku", StringType()), req(5, "n", IntegerType()))
    table = catalog.create_table("db.dropped", IcebergSchema(
        req(1, "id", LongType()), req(2, "name", StringType()), req(3, "items", ListType(6, element, True))))
    item = SchemaBuilder.struct().field("sku", Schema.STRING_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("items", SchemaBuilder.array(item).build())
        .build()
    )
    value = Struct(schema).put("id", 1).put("items", [Struct(item).put("sku", "a")])

    without_evolution = RecordConverter(table.schema(), evolve=False)
    with pytest.raises(RecordConversionError, match="Null value for required field"):
        without_evolution.convert([value])
    updates = RecordConverter(table.schema(), evolve=True).convert([value]).updates
    assert sorted(m.name for m in updates.make_optionals) == ["items.element.n", "name"]
    assert apply_schema_updates(table, updates)
    converted = RecordConverter(catalog.load_table("db.dropped").schema(), evolve=True).convert([value])
    assert converted.table.to_pylist() == [{"id": 1, "name": None, "items": [{"sku": "a", "n": None}]}]


DECIMAL_2 = ConnectDecimal.schema(2)


@pytest.mark.parametrize("column, schema", [
    (LongType(), Schema.INT32_SCHEMA),
    (IntegerType(), Schema.INT64_SCHEMA),  # a widening
    (DoubleType(), Schema.INT32_SCHEMA),
    (FloatType(), Schema.FLOAT64_SCHEMA),  # a widening
    (DecimalType(10, 2), DECIMAL_2),
    (DecimalType(10, 2), Schema.INT64_SCHEMA),
    (TimestamptzType(), Schema.INT64_SCHEMA),
    (TimestamptzType(), Schema.STRING_SCHEMA),
    (DateType(), ConnectTimestamp.SCHEMA),
    (UUIDType(), Schema.STRING_SCHEMA),
    (BinaryType(), Schema.BYTES_SCHEMA),
    (StringType(), SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()),  # JSON text
    (StructType(opt(9, "a", IntegerType())), SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build()),
])
def test_what_a_column_takes_without_a_conflict(column, schema) -> None:
    assert conversion_conflict(column, schema) is None


@pytest.mark.parametrize("column, schema, record", [
    (StringType(), Schema.INT32_SCHEMA, "int"),
    (IntegerType(), Schema.STRING_SCHEMA, "string"),
    (LongType(), Schema.FLOAT64_SCHEMA, "double"),
    (IntegerType(), Schema.BOOLEAN_SCHEMA, "boolean"),
    (BooleanType(), Schema.INT32_SCHEMA, "int"),
    (DecimalType(10, 2), ConnectDecimal.schema(3), "decimal(38, 3)"),
    (StringType(), Schema.BYTES_SCHEMA, "binary"),
    (ListType(1, StringType()), Schema.STRING_SCHEMA, "string"),
    (StructType(opt(9, "a", IntegerType())), SchemaBuilder.array(Schema.INT32_SCHEMA).build(), "list<int>"),
])
def test_incompatible_changes_are_conflicts(column, schema, record) -> None:
    assert str(conversion_conflict(column, schema)).replace("1: element: required ", "") == record


def test_an_incompatible_change_fails_naming_the_column_and_types_at_any_depth() -> None:
    table = IcebergSchema(req(1, "id", LongType()),
                          opt(2, "ma", MapType(3, StringType(), 4, StructType(opt(5, "code", StringType())))))
    ok = SchemaBuilder.struct().field("code", Schema.OPTIONAL_STRING_SCHEMA).optional().build()
    bad = SchemaBuilder.struct().field("code", Schema.OPTIONAL_INT32_SCHEMA).optional().build()

    def record(value_schema, code):
        schema = (SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA)
                  .field("ma", SchemaBuilder.map(Schema.STRING_SCHEMA, value_schema).optional().build()).build())
        return Struct(schema).put("id", 1).put("ma", {"k": Struct(value_schema).put("code", code)})

    batch = [record(ok, "a"), record(bad, 5), record(ok, "b")]
    with pytest.raises(RecordConversionError) as failure:
        RecordConverter(table, evolve=True).convert(batch)
    assert failure.value.index == 1
    cause = failure.value.cause
    assert isinstance(cause, IncompatibleSchemaChange)
    assert (cause.column, cause.field_id, str(cause.table_type), str(cause.record_type)) == (
        "ma.value.code", 5, "string", "int")
    # Without evolution the sink coerces as the Java sink does.
    assert RecordConverter(table, evolve=False).convert(batch).table.num_rows == 3


# === provenance: which registry schemas created and evolved a table ============================================


def _updates(*notes: tuple[str, int], add: str | None = None) -> SchemaUpdates:
    updates = SchemaUpdates()
    if add:
        updates.add_column(None, add, StringType())
    for topic, schema_id in notes:
        updates.note_registry_schema(topic, schema_id)
    return updates


def test_registry_schema_ids_are_recorded_with_creation_and_each_schema_update(catalog: Catalog) -> None:
    table = catalog.create_table("db.prov", IcebergSchema(req(1, "id", LongType()), req(2, "n", IntegerType())))
    assert not apply_schema_updates(table, _updates(("orders", 11)))  # just created: no schema change
    assert table.properties[topic_schema_ids_property("orders")] == "11"
    assert table.properties[iceberg_schema_property(0)] == "11"
    assert not apply_schema_updates(table, _updates(("orders", 11)))  # nothing new: no commit
    log_length = len(table.metadata.metadata_log)

    # Two tasks met two new schemas in one cycle: merged, one schema update naming both.
    task_a = _updates(("orders", 12), add="a")
    task_b = RecordConverter(table.schema(), evolve=True).convert([
        Struct(s := SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).field("n", Schema.INT64_SCHEMA).build())
        .put("id", 1).put("n", 2)]).updates
    task_b.note_registry_schema("orders", 13)
    merged = task_a.merge(task_b)
    assert merged.registry_schema_ids == {"orders": [12, 13]} and "registry schema ids" in repr(merged)
    assert apply_schema_updates(table, merged)
    table = catalog.load_table("db.prov")
    assert [sch.schema_id for sch in table.metadata.schemas] == [0, 1]
    assert len(table.metadata.metadata_log) == log_length + 1  # schema and properties in one commit
    assert table.properties[topic_schema_ids_property("orders")] == "11,12,13"
    assert table.properties[iceberg_schema_property(1)] == "12,13"

    assert registry_ids_of_column(table, 1) == [11]          # id: unchanged since creation
    assert registry_ids_of_column(table, 2) == [12, 13]      # n: widened by schema 1
    assert registry_ids_of_column(table, table.schema().find_field("a").field_id) == [12, 13]
    assert registry_ids_of_column(table, 999) == []
    del s


def test_the_incompatible_change_error_names_table_column_types_and_both_schema_ids(catalog: Catalog) -> None:
    table = catalog.create_table("db.clash", IcebergSchema(req(1, "id", LongType()), opt(2, "name", StringType())))
    apply_schema_updates(table, _updates(("t", 3)))
    error = IncompatibleSchemaChange("name", 2, StringType(), IntegerType())
    message = str(error.for_table("db.clash", catalog.load_table("db.clash"), 5, "topic: t, partition: 1, offset: 9"))
    assert message.startswith("Incompatible schema change for table db.clash: column 'name' is string "
                              "(schema id 3), schema id 5 makes it int. Only adding columns")
    assert message.endswith("the table was not changed. Record: topic: t, partition: 1, offset: 9")
    unknown = str(error.for_table("db.clash", catalog.create_table("db.other", table.schema()), None, "x"))
    assert (
        "(no registry schema id recorded for it), the record's schema (no registry schema id) makes it int" in unknown
    )
