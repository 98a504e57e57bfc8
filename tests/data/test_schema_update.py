"""Schema-evolution requests: bookkeeping, merging across tasks, applying.

(TestSchemaUpdate, TestSchemaUtils, §6.3 #6)
"""

from __future__ import annotations

import pickle
from unittest import mock

import pytest
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.types import (
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
)

from connector.api import DataException, SchemaBuilder, Struct
from connector.api import Schema as ConnectSchema
from connector.data.convert.record_converter import RecordConverter
from connector.data.convert.schema_update import (
    AddColumn,
    MakeOptional,
    SchemaUpdates,
    UpdateType,
    apply_schema_updates,
    merge_types,
    pending_updates,
    same_type,
)

SIMPLE = Schema(NestedField(1, "i", IntegerType(), required=True), NestedField(2, "f", FloatType(), required=True))
NESTED = Schema(
    NestedField(3, "i", IntegerType(), required=True),
    NestedField(4, "st", StructType(NestedField(5, "i", IntegerType(), required=True),
                                    NestedField(6, "f", FloatType(), required=True)), required=True),
)


def _struct(*fields: tuple[str, object]) -> StructType:
    return StructType(*[NestedField(i + 1, n, t, required=False) for i, (n, t) in enumerate(fields)])


# --- bookkeeping ---------------------------------------------------------------------


def test_consumer_bookkeeping() -> None:
    updates = SchemaUpdates()
    assert updates.is_empty() and not updates
    updates.add_column(None, "a", StringType())
    updates.add_column(None, "a", StringType())
    updates.add_column("st", "b", LongType())
    updates.update_type("i", LongType())
    updates.update_type("i", LongType())
    updates.make_optional("x")
    updates.make_optional("x")
    assert len(updates) == 4
    assert [a.key for a in updates.add_columns] == ["a", "st.b"]
    assert updates.update_types == [UpdateType("i", LongType())]
    assert updates.make_optionals == [MakeOptional("x")]
    assert list(updates)[0] == AddColumn(None, "a", StringType())


def test_within_a_task_the_first_type_wins_and_structs_union() -> None:
    updates = SchemaUpdates()
    updates.add_column(None, "a", LongType())
    updates.add_column(None, "a", StringType())  # later record: coerced to long (or fails) on reconversion
    updates.add_column(None, "s", _struct(("x", LongType())))
    updates.add_column(None, "s", _struct(("y", StringType())))
    updates.add_column(None, "n", IntegerType())
    updates.add_column(None, "n", LongType())
    types = {a.key: a.type for a in updates.add_columns}
    assert types["a"] == LongType() and types["n"] == LongType()
    assert [f.name for f in types["s"].fields] == ["x", "y"]


def test_picklable() -> None:
    updates = SchemaUpdates()
    updates.add_column("st", "l", ListType(1, _struct(("x", LongType())), element_required=False))
    updates.update_type("f", DoubleType())
    updates.make_optional("i")
    assert pickle.loads(pickle.dumps(updates)) == updates


def test_merge_from_several_tasks() -> None:
    a, b, c = SchemaUpdates(), SchemaUpdates(), SchemaUpdates()
    a.add_column(None, "n", LongType())
    a.add_column(None, "s", _struct(("x", LongType())))
    b.add_column(None, "n", IntegerType())
    b.add_column(None, "s", _struct(("y", StringType()), ("x", IntegerType())))
    b.add_column(None, "d", DoubleType())
    c.add_column(None, "d", FloatType())
    c.add_column(None, "m", MapType(1, StringType(), 2, _struct(("p", IntegerType()))))
    c.make_optional("i")
    b.add_column(None, "m", MapType(1, StringType(), 2, _struct(("q", StringType()))))
    merged = a.merge(b).merge(c)
    types = {add.key: add.type for add in merged.add_columns}
    assert types["n"] == LongType() and types["d"] == DoubleType()
    assert [(f.name, f.field_type) for f in types["s"].fields] == [("x", LongType()), ("y", StringType())]
    assert [f.name for f in types["m"].value_type.fields] == ["q", "p"]
    assert merged.make_optionals == [MakeOptional("i")]


def test_merge_conflict_names_column_and_types() -> None:
    a, b = SchemaUpdates(), SchemaUpdates()
    a.add_column("st", "c", LongType())
    b.add_column("st", "c", StringType())
    with pytest.raises(DataException) as info:
        a.merge(b)
    assert "st.c" in str(info.value) and "long" in str(info.value) and "string" in str(info.value)
    with pytest.raises(DataException, match="s.x"):
        merge_types(_struct(("x", LongType())), _struct(("x", StringType())), "s")


def test_merge_types() -> None:
    assert merge_types(DecimalType(5, 2), DecimalType(9, 2), "d") == DecimalType(9, 2)
    with pytest.raises(DataException):
        merge_types(DecimalType(5, 2), DecimalType(5, 3), "d")
    merged = merge_types(
        ListType(1, _struct(("x", LongType())), element_required=True),
        ListType(7, _struct(("x", LongType())), element_required=False),
        "l",
    )
    assert isinstance(merged, ListType) and not merged.element_required
    assert same_type(_struct(("x", LongType())), StructType(NestedField(99, "x", LongType(), required=False)))


# --- applying ----------------------------------------------------------------------------


def test_apply_schema_updates_filters_what_exists(catalog: Catalog) -> None:
    table = catalog.create_table("db.simple", SIMPLE)
    updates = SchemaUpdates()
    updates.add_column(None, "i", IntegerType())
    updates.update_type("i", IntegerType())
    updates.make_optional("i")
    updates.update_type("f", DoubleType())
    updates.add_column(None, "s", StringType())
    pending = pending_updates(table.schema(), updates)
    assert pending.add_columns == [AddColumn(None, "s", StringType())]
    assert pending.update_types == [UpdateType("f", DoubleType())]
    assert pending.make_optionals == [MakeOptional("i")]

    schema_ids_before = len(table.metadata.schemas)
    assert apply_schema_updates(table, updates)
    schema = catalog.load_table("db.simple").schema()
    assert schema.find_field("s").field_type == StringType() and not schema.find_field("s").required
    assert schema.find_field("f").field_type == DoubleType()
    assert not schema.find_field("i").required
    assert len(catalog.load_table("db.simple").metadata.schemas) == schema_ids_before + 1  # one commit
    assert not apply_schema_updates(table, updates)  # already applied


def test_apply_nested_schema_updates(catalog: Catalog) -> None:
    table = catalog.create_table("db.nested", NESTED)
    updates = SchemaUpdates()
    updates.add_column("st", "i", IntegerType())
    updates.update_type("st.i", IntegerType())
    updates.make_optional("st.i")
    updates.update_type("st.f", DoubleType())
    updates.add_column("st", "s", StringType())
    pending = pending_updates(table.schema(), updates)
    assert [a.key for a in pending.add_columns] == ["st.s"]
    assert apply_schema_updates(table, updates)
    schema = catalog.load_table("db.nested").schema()
    assert schema.find_field("st.s").field_type == StringType()
    assert schema.find_field("st.f").field_type == DoubleType()
    assert not schema.find_field("st.i").required


def test_no_updates_touch_nothing() -> None:
    table = mock.Mock()
    assert not apply_schema_updates(table, SchemaUpdates())
    table.refresh.assert_not_called()
    table.update_schema.assert_not_called()


def test_invalid_column_in_update(catalog: Catalog) -> None:
    table = catalog.create_table("db.inv", SIMPLE)
    updates = SchemaUpdates()
    updates.make_optional("nope")
    with pytest.raises(DataException, match="Invalid column: nope"):
        apply_schema_updates(table, updates)


def test_retries_commit_conflicts(catalog: Catalog) -> None:
    table = catalog.create_table("db.retry", SIMPLE)
    updates = SchemaUpdates()
    updates.add_column(None, "s", StringType())
    real = table.update_schema
    calls = {"n": 0}

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] < 3:
            raise CommitFailedException("conflict")
        return real(*args, **kwargs)

    with mock.patch.object(table, "update_schema", side_effect=flaky):
        assert apply_schema_updates(table, updates)
    assert calls["n"] == 3
    assert catalog.load_table("db.retry").schema().find_field("s")

    other = catalog.create_table("db.retry2", SIMPLE)
    with mock.patch.object(other, "update_schema", side_effect=CommitFailedException("always")):
        with pytest.raises(CommitFailedException):
            apply_schema_updates(other, updates)


def test_add_nested_columns_in_struct_list_and_map(catalog: Catalog) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "st", StructType(NestedField(3, "a", LongType())), required=False),
        NestedField(4, "li", ListType(5, StructType(NestedField(6, "a", LongType())), element_required=False)),
        NestedField(
            7, "ma", MapType(8, StringType(), 9, StructType(NestedField(10, "a", LongType())), value_required=False)
        ),
    )
    table = catalog.create_table("db.deep", schema)
    converter = RecordConverter(table.schema(), evolve=True)
    record = {"id": 1, "st": {"a": 1, "b": "x"}, "li": [{"a": 1, "c": 2.5}], "ma": {"k": {"a": 1, "d": [True]}}}
    result = converter.convert([record])
    assert result.table is None
    assert sorted(a.key for a in result.updates.add_columns) == ["li.element.c", "ma.value.d", "st.b"]
    assert apply_schema_updates(table, result.updates)
    evolved = catalog.load_table("db.deep").schema()
    assert evolved.find_field("st.b").field_type == StringType()
    assert evolved.find_field("li.element.c").field_type == DoubleType()
    assert isinstance(evolved.find_field("ma.value.d").field_type, ListType)
    again = RecordConverter(evolved, evolve=True).convert([record])
    assert not again.updates and again.table.to_pylist()[0]["ma"] == [("k", {"a": 1, "d": [True]})]


def test_widen_and_make_optional_from_connect_schema(catalog: Catalog) -> None:
    table = catalog.create_table("db.widen", NESTED)
    st = (
        SchemaBuilder.struct().field("i", SchemaBuilder.int64()).field("f", SchemaBuilder.float64())
        .field("n", SchemaBuilder.struct().field("z", ConnectSchema.STRING_SCHEMA).optional()).build()
    )
    value_schema = SchemaBuilder.struct().field("i", ConnectSchema.OPTIONAL_INT32_SCHEMA).field("st", st).build()
    value = Struct(value_schema).put("i", 5).put("st", Struct(st).put("i", 2**40).put("f", 0.1))
    result = RecordConverter(table.schema(), evolve=True).convert([value])
    assert {u.name for u in result.updates.update_types} == {"st.i", "st.f"}
    assert [m.name for m in result.updates.make_optionals] == ["i"]
    assert [a.key for a in result.updates.add_columns] == ["st.n"]
    assert apply_schema_updates(table, result.updates)
    evolved = catalog.load_table("db.widen").schema()
    assert evolved.find_field("st.i").field_type == LongType()
    converted = RecordConverter(evolved, evolve=True).convert([value])
    assert converted.table.to_pylist() == [{"i": 5, "st": {"i": 2**40, "f": 0.1, "n": None}}]


def test_tasks_merge_into_one_schema_update(catalog: Catalog) -> None:
    table = catalog.create_table("db.tasks", Schema(NestedField(1, "id", LongType(), required=True)))
    batches = [
        [{"id": 1, "a": 1}],
        [{"id": 2, "a": 2, "s": {"x": 1}}],
        [{"id": 3, "s": {"y": "b"}, "c": [1.5]}],
    ]
    per_task = [RecordConverter(table.schema(), evolve=True).convert(b).updates for b in batches]
    merged = per_task[0].merge(per_task[1]).merge(per_task[2])
    versions = len(table.metadata.schemas)
    assert apply_schema_updates(table, merged)
    reloaded = catalog.load_table("db.tasks")
    assert len(reloaded.metadata.schemas) == versions + 1
    assert [f.name for f in reloaded.schema().find_field("s").field_type.fields] == ["x", "y"]
    for batch in batches:
        assert RecordConverter(reloaded.schema(), evolve=True).convert(batch).table is not None
