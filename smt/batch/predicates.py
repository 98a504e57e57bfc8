"""Column-wise forms of Kafka's predicates: one boolean per row of a :class:`RecordBatchView`."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from smt.batch.kernels import map_distinct
from smt.batch.view import RecordBatchView
from smt.predicates.has_header_key import HasHeaderKey
from smt.predicates.record_is_tombstone import RecordIsTombstone
from smt.predicates.topic_name_matches import TopicNameMatches

BatchTest = Callable[[RecordBatchView], pa.Array]


def _topic_name_matches(predicate: TopicNameMatches) -> BatchTest:
    def test(view: RecordBatchView) -> pa.Array:
        matches = map_distinct(view.topic, lambda topic: predicate.pattern.fullmatch(topic) is not None,
                               pa.bool_())
        return pc.fill_null(matches, False)

    return test


def _has_header_key(predicate: HasHeaderKey) -> BatchTest:
    def test(view: RecordBatchView) -> pa.Array:
        headers = view.headers
        keys = pc.list_flatten(headers).field("key")
        parents = pc.list_parent_indices(headers)
        hits = pc.unique(parents.filter(pc.fill_null(pc.equal(keys, predicate.name), False)))
        return pc.is_in(pa.array(np.arange(len(headers), dtype=parents.type.to_pandas_dtype())), value_set=hits)

    return test


def _record_is_tombstone(predicate: RecordIsTombstone) -> BatchTest:
    def test(view: RecordBatchView) -> pa.Array:
        return view.value.array.is_null()

    return test


_FORMS: dict[type, Callable[[Any], BatchTest]] = {
    TopicNameMatches: _topic_name_matches,
    HasHeaderKey: _has_header_key,
    RecordIsTombstone: _record_is_tombstone,
}


def batch_predicate(predicate: Any) -> BatchTest | None:
    """The column-wise test of a configured predicate (exact class only), or None."""
    form = _FORMS.get(type(predicate))
    return None if form is None else form(predicate)
