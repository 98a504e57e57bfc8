"""Filter: every record dropped, with or without a schema (kept only by a negated predicate)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from smt.batch.base import BatchTransform, register
from smt.batch.typed_rules import register_typed
from smt.batch.view import RecordBatchView
from smt.transforms import filter as filter_smt


@register(filter_smt.Filter)
class FilterBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        return view.filter(pa.array(np.zeros(view.num_rows, dtype=bool)))


register_typed(filter_smt.Filter)(FilterBatch)
