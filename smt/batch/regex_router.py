"""RegexRouter: the topic column rewritten by the Java regex, once per distinct topic."""

from __future__ import annotations

import pyarrow as pa

from smt.batch.base import BatchTransform, register
from smt.batch.kernels import map_distinct
from smt.batch.typed_rules import register_typed
from smt.batch.view import RecordBatchView
from smt.transforms import regex_router


@register(regex_router.RegexRouter)
class RegexRouterBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        return view.with_topic(map_distinct(view.topic, self.transformation.route, pa.string()))


register_typed(regex_router.RegexRouter)(RegexRouterBatch)
