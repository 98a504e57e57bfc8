"""Filter, column-wise: its form for schemaless values (Connect Maps) and, where it has one, its form for values
with a Connect schema (typed views; see :mod:`smt.batch.typed_rules`). Both follow ``smt.transforms.filter``
line by line, and decline what they cannot do exactly as it does."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from smt.batch.base import BatchTransform, register
from smt.batch.typed_rules import (
    register_typed,
)
from smt.batch.view import RecordBatchView
from smt.transforms import filter as filter_smt


@register(filter_smt.Filter)
class FilterBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        return view.filter(pa.array(np.zeros(view.num_rows, dtype=bool)))


register_typed(filter_smt.Filter)(FilterBatch)
