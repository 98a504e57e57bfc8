"""TimestampRouter: the topic column rewritten with each record's timestamp, formatted as Java does."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from smt.batch.base import BatchTransform, register
from smt.batch.kernels import map_distinct
from smt.batch.timestamp_converter import format_millis
from smt.batch.typed_rules import register_typed
from smt.batch.view import RecordBatchView
from smt.transforms import timestamp_router


@register(timestamp_router.TimestampRouter)
class TimestampRouterBatch(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if view.num_rows == 0:
            return view
        if view.timestamp.null_count or smt._format_error is not None:
            raise Declined("TimestampRouter fails on this batch")
        formatted = pc.dictionary_encode(format_millis(smt.timestamp_format, view.timestamp))
        topics = pc.dictionary_encode(view.topic)
        width = len(formatted.dictionary)
        codes = pc.add(pc.multiply(topics.indices.cast(pa.int64()), width), formatted.indices.cast(pa.int64()))
        topic_names = topics.dictionary.to_pylist()
        stamps = formatted.dictionary.to_pylist()

        def topic_for(code: int) -> str:
            return smt.topic_format.replace("${topic}", topic_names[code // width]).replace(
                "${timestamp}", stamps[code % width])

        return view.with_topic(map_distinct(codes, topic_for, pa.string()))


register_typed(timestamp_router.TimestampRouter)(TimestampRouterBatch)
