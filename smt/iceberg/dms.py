"""``DmsTransform``: flatten an AWS DMS change record for the Iceberg sink.

``org.apache.iceberg.connect.transforms.DmsTransform``. AWS DMS writes JSON
records ``{"data": {...row...}, "metadata": {"operation": ..., "timestamp": ...,
"schema-name": ..., "table-name": ..., ...}}`` to Kafka; read them schemaless
(JsonConverter with ``schemas.enable=false``). The row's fields become the
value and a ``_cdc`` map holds ``op``, ``ts`` and ``source``.
"""

from __future__ import annotations

import logging

from connector.api.errors import DataException
from connector.api.java.value_of import java_str
from connector.api.record import SinkRecord
from smt.base import Transformation, require_map
from smt.iceberg._util import (
    COL_CDC,
    COL_OP,
    COL_SOURCE,
    COL_TS,
    OP_DELETE,
    OP_INSERT,
    OP_UPDATE,
)

LOG = logging.getLogger(__name__)


#: DMS operations that are not inserts (``insert``, ``load`` and the rest are).
_OPERATIONS = {"update": OP_UPDATE, "delete": OP_DELETE}


def map_operation(operation: str) -> str:
    """DMS ``update`` -> ``U``, ``delete`` -> ``D``; ``insert``, ``load`` and the rest -> ``I``."""
    return _OPERATIONS.get(operation, OP_INSERT)


class DmsTransform(Transformation):
    """Promote ``data`` to the top level and add a ``_cdc`` map. Schemaless records only.

    A record whose ``data`` or ``metadata`` is not a map is dropped (``None``),
    as the Java transform does.
    """

    def apply(self, record: SinkRecord) -> SinkRecord | None:
        if record.value is None:
            return record
        if record.value_schema is not None:
            raise DataException("Schema not support for DMS records")
        value = require_map(record.value, "DMS transform")
        data = value.get("data")
        metadata = value.get("metadata")
        if not isinstance(data, dict) or not isinstance(metadata, dict):
            LOG.debug("Unable to transform DMS record, skipping...")
            return None

        operation = metadata.get("operation")
        if operation is None:
            raise DataException(f"DMS record has no metadata.operation ({record.describe()})")
        cdc = {
            COL_OP: map_operation(java_str(operation)),
            COL_TS: metadata.get("timestamp"),
            COL_SOURCE: f"{java_str(metadata.get('schema-name'))}.{java_str(metadata.get('table-name'))}",
        }
        new_value = dict(data)
        new_value[COL_CDC] = cdc
        return record.new_record(
            record.topic, record.kafka_partition, record.key_schema, record.key,
            None, new_value, record.timestamp,
        )
