"""A stage without a batch form inside a batch chain: run per record, for that stage's rows only.

A chain like ``[InsertField, <user SMT>, MaskField]`` keeps its batch stages
column-wise; only the user SMT runs record by record. :class:`RecordStage`
turns the view's rows into ``SinkRecord``s, applies the stage (with its
predicate) to each, and turns the results back into a view.

Exactness rules (otherwise the stage declines and the whole batch runs per record):

* the records must be the ones the per-record chain would see: their keys
  and headers come from the converters (``records_of``, given by the task
  pipeline); their values are decoded from the raw JSON while no stage has
  changed them (:attr:`Values.pristine`), and otherwise taken from the maps,
  which is exact only when no map holds a null-valued key (a null and an
  absent key look alike in a struct) and no number's JSON kind is unknown;
* the stage may change values, topics and timestamps; a stage that changes a
  record's key, headers or partition declines (the view keeps them raw, as
  the converters read them);
* the values it returns must be schemaless JSON-like data (maps, lists,
  strings, numbers, booleans, null) that Arrow can hold in one column.

Errors a stage raises decline too, so that the per-record strategy reports
them with the record's coordinates. What a stage does to keys, headers,
partitions or value kinds is its nature, not the batch's: after one such
decline the stage is :attr:`RecordStage.unsuitable` and later batches decline
before any work.
"""

from __future__ import annotations

import numbers
from dataclasses import replace
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import ConnectException
from connector.api.record import SinkRecord
from smt.base import KeySide
from smt.batch.view import ALL, RecordBatchView, Values
from smt.transforms.drop_headers import DropHeaders
from smt.transforms.header_from import HeaderFrom
from smt.transforms.insert_header import InsertHeader
from smt.transforms.value_to_key import ValueToKey

#: The exact SinkRecords of a view's rows (keys and headers through the converters; values decoded from the
#: raw JSON when ``pristine``, else None, to be filled in from the maps).
RecordsOf = Callable[[RecordBatchView, bool], list[SinkRecord]]

_JSON_SCALARS = (str, bool, int, float, type(None))

#: Kafka's SMTs whose purpose is to change keys or headers: a chain holding one runs per record.
_KEY_OR_HEADER_SMTS = (InsertHeader, DropHeaders, HeaderFrom, ValueToKey)


def changes_keys_or_headers(stage: Any) -> bool:
    """Whether a chain stage is known to change keys or headers (every ``$Key`` SMT does)."""
    return isinstance(stage.transformation, (KeySide, *_KEY_OR_HEADER_SMTS))


class Unsuitable(Declined):
    """A decline that every later batch would meet too (the stage changes keys, say)."""


class RecordStage:
    """A chain stage (``smt.chain.TransformationStage``) that has no batch form, run record by record."""

    def __init__(self, stage: Any, records_of: RecordsOf):
        self.stage = stage
        self.records_of = records_of
        self.alias = stage.alias
        self.name = stage.type_name.rsplit(".", 1)[-1]  # as BatchStage names its SMT in decline reasons
        self.unsuitable: str | None = None

    def apply(self, view: RecordBatchView) -> RecordBatchView:
        records = self._records(view)
        try:
            results = [self.stage.apply(record) for record in records]
        except ConnectException as exc:
            raise Declined(f"a record fails ({type(exc).__name__})") from exc
        try:
            return _view_of(view, records, results)
        except Unsuitable as unsuitable:
            self.unsuitable = f"{self.name}: {unsuitable.reason}"
            raise

    def _records(self, view: RecordBatchView) -> list[SinkRecord]:
        if view.value.pristine and view.raw_value is not None:
            return self.records_of(view, True)
        if view.value.any_loose and view.loose_fields():
            raise Declined("numbers whose JSON kind is unknown reach a per-record stage")
        if _has_null_valued_keys(view.value.array):
            raise Declined("null-valued keys reach a per-record stage")
        values = view.value.to_pylist()
        return [replace(record, value=value) for record, value in zip(self.records_of(view, False), values)]


def _has_null_valued_keys(array: pa.Array) -> bool:
    """Whether a valid map (struct row) anywhere in ``array`` has a null field: absent or null, unknown which."""
    if pa.types.is_struct(array.type):
        valid = array.is_valid()
        for child in array.flatten():
            if child.null_count and pc.any(pc.and_(child.is_null(), valid)).as_py():
                return True
            if _has_null_valued_keys(child):
                return True
        return False
    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        return _has_null_valued_keys(array.flatten())
    return False


def _view_of(view: RecordBatchView, records: list[SinkRecord], results: list[SinkRecord | None]) -> RecordBatchView:
    """The view of the records a stage returned (dropped ones removed), in record order."""
    kept: list[int] = []
    out: list[SinkRecord] = []
    for i, (record, result) in enumerate(zip(records, results)):
        if result is not None:
            _check_unchanged_outside_value(record, result)
            kept.append(i)
            out.append(result)
    rows = view.take(pa.array(np.array(kept, dtype=np.int64))) if len(kept) < len(results) else view
    values = [r.value for r in out]
    array, loose = _arrow_values(values)
    return replace(rows, topic=pa.array([r.topic for r in out], pa.string()),
                   timestamp=pa.array([r.timestamp for r in out], pa.int64()),
                   value=Values(array, loose))


def _check_unchanged_outside_value(before: SinkRecord, after: SinkRecord) -> None:
    if after.value_schema is not None:
        raise Unsuitable("a per-record stage gives values with a schema")
    if (after.key is not before.key and after.key != before.key) or after.key_schema != before.key_schema:
        raise Unsuitable("a per-record stage changes keys")
    if after.headers != before.headers:
        raise Unsuitable("a per-record stage changes headers")
    if after.kafka_partition != before.kafka_partition:
        raise Unsuitable("a per-record stage changes partitions")


def _arrow_values(values: list[Any]) -> tuple[pa.Array, frozenset]:
    """One Arrow column of JSON-like values, and the top-level fields (or ALL) where ints became floats."""
    if not all(_json_like(v) for v in values):
        raise Declined("a per-record stage gives values that are not JSON-like")
    try:
        array = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        raise Declined("a per-record stage gives values of mixed kinds in one field") from exc
    if pa.types.is_struct(array.type):
        loose = {name for name in array.type.names if _ints_as_floats([v.get(name) for v in values if v])}
        return array, frozenset(loose)
    return array, frozenset([ALL]) if _ints_as_floats(values) else frozenset()


def _json_like(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_like(v) for v in value)
    return isinstance(value, _JSON_SCALARS)


def _ints_as_floats(values: list[Any]) -> bool:
    """Whether these values mix integers with floats somewhere (Arrow then holds the integers as floats)."""
    kinds: set[str] = set()
    _collect_number_kinds(values, kinds)
    return kinds == {"int", "float"}


def _collect_number_kinds(value: Any, kinds: set) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _collect_number_kinds(item, kinds)
    elif isinstance(value, list):
        for item in value:
            _collect_number_kinds(item, kinds)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, numbers.Integral):
        kinds.add("int")
    elif isinstance(value, float):
        kinds.add("float")
