"""Batch (column-wise, Arrow) forms of SMTs: the same result as the per-record chain, faster.

``BatchTransformationChain.from_chain(chain)`` returns the batch form of a
configured :class:`smt.chain.TransformationChain`, or None when some stage
has none (the caller then runs the per-record chain). Its ``apply(view)``
transforms a :class:`RecordBatchView` and raises
:class:`connector.api.declined.Declined` (with a reason) whenever the
per-record result cannot be guaranteed for that batch.

Only pyarrow and numpy are used here; nothing imports Spark.
"""

from smt.batch.base import BatchTransform, register
from smt.batch.chain import BatchStage, BatchTransformationChain
from smt.batch.forms import batch_form, typed_batch_form
from smt.batch.predicates import batch_predicate
from smt.batch.view import ALL, RecordBatchView, Values, normalized, to_python

__all__ = [
    "ALL", "BatchStage", "BatchTransform", "BatchTransformationChain", "RecordBatchView",
    "Values", "batch_form", "batch_predicate", "normalized", "register", "to_python", "typed_batch_form",
]
