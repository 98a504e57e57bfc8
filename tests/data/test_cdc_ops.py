"""Which rows of an upsert/CDC table delete their key, and which are refused (bad op, null key)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import DoubleType, ListType, LongType, MapType, NestedField, StringType, StructType

from connector.api.errors import ConfigException
from connector.data.convert.cdc_ops import op_letters, row_changes
from connector.data.convert.changes import id_column
from connector.data.convert.column_paths import PathNotFound, resolve

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "_cdc", StructType(NestedField(3, "op", StringType(), required=False)), required=False),
    NestedField(4, "meta", MapType(5, StringType(), 6, StringType(), value_required=False), required=False),
    NestedField(7, "account", StructType(NestedField(8, "no", StringType(), required=False)), required=False),
    NestedField(9, "score", DoubleType(), required=False),
    NestedField(10, "tags", ListType(11, LongType(), element_required=False), required=False),
)


def _data(ops, ids=None, accounts=None) -> pa.Table:
    n = len(ops)
    ids = ids if ids is not None else list(range(n))
    accounts = accounts if accounts is not None else [{"no": "a"}] * n
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "_cdc": pa.array([None if op is None else {"op": op} for op in ops], pa.struct([("op", pa.string())])),
        "meta": pa.array([[("op", op)] if op is not None else [] for op in ops], pa.map_(pa.string(), pa.string())),
        "account": pa.array(accounts, pa.struct([("no", pa.string())])),
    })


def test_the_first_letter_trimmed_and_upper_cased_is_the_operation():
    values = pa.array(["I", "insert", " r", "C", "u", "UPDATE", "d ", "\tDelete", "", "  ", None, "x", "Ü"])
    assert op_letters(values).to_pylist() == ["I", "I", "R", "C", "U", "U", "D", "D", "", "", None, "X", "Ü"]


@pytest.mark.parametrize("field", ["_cdc.op", "meta.op"])
def test_deletes_and_refused_operations(field):
    ops = ["I", "r", "c", " u", "D", "delete", "x", "", " ", None, "Insert"]
    changes = row_changes(_data(ops), resolve(SCHEMA, field), (resolve(SCHEMA, "id"),))
    assert changes.deleted.to_pylist() == [False, False, False, False, True, True, False, False, False, False,
                                           False]
    assert [index for index, _ in changes.bad] == [6, 7, 8, 9]
    why = dict(changes.bad)
    assert "invalid operation 'x' in " + field in why[6] and "I, R or C (insert), U (update) or D (delete)" in why[6]
    assert "invalid operation ''" in why[7] and "invalid operation ' '" in why[8] and "invalid operation None" in why[9]


def test_without_a_cdc_field_every_row_is_an_upsert():
    changes = row_changes(_data(["D", None]), None, (resolve(SCHEMA, "id"),))
    assert changes.deleted.to_pylist() == [False, False] and changes.bad == []


def test_a_null_in_any_id_column_is_refused_naming_the_column():
    keys = (resolve(SCHEMA, "id"), resolve(SCHEMA, "account.no"))
    data = _data(["I", "U", "D", "I"], ids=[1, None, 3, 4], accounts=[{"no": "a"}, {"no": "b"}, None, {"no": None}])
    changes = row_changes(data, resolve(SCHEMA, "_cdc.op"), keys)
    assert [(i, w.split(" is null")[0]) for i, w in changes.bad] == [
        (1, "id column id"), (2, "id column account.no"), (3, "id column account.no")]


def test_paths_resolve_through_structs_and_map_keys_and_name_the_table_spelling():
    assert resolve(SCHEMA, "_CDC.OP", case_sensitive=False).name == "_cdc.op"
    assert resolve(SCHEMA, "account.no").field_ids == (7, 8)
    with pytest.raises(PathNotFound, match="no field 'nope'"):
        resolve(SCHEMA, "_cdc.nope")
    with pytest.raises(PathNotFound, match="tags is a list"):
        resolve(SCHEMA, "tags.element")


@pytest.mark.parametrize("name, message", [
    ("nope", "Id column nope of table db.t is not in the table's schema: no field 'nope'"),
    ("score", "Id column score of table db.t is a double: Iceberg does not allow it"),
    ("meta.op", "Id column meta.op of table db.t is inside a map"),
    ("tags.element", "Id column tags.element of table db.t is not in the table's schema: tags is a list "
                     r"\(identifier fields cannot be inside a list or a map\)"),
    ("account", "Id column account of table db.t is a struct<8: no: optional string>, not a primitive type"),
])
def test_id_columns_iceberg_forbids_are_refused_naming_table_and_column(name, message):
    with pytest.raises(ConfigException, match=message):
        id_column(SCHEMA, "db.t", name)
