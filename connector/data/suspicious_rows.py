"""Which values of a batch look bad on their own, found without converting them.

When error tolerance is on and a columnar strategy declines a batch, these rows
go record by record (where the bad ones are caught, logged and sent to the
dead-letter queue) and the rest is tried column-wise again, so one bad record
does not send a whole batch down the slow path. Each check returns a boolean
mask over the batch, or None when no value looks bad.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.errors import DataException
from converters.batch.json_screen import json_converter_value

FRAME_BYTES = 5  # Confluent's wire format: magic byte 0, then a 4-byte schema id


def not_registry_framed(values: pa.Array) -> np.ndarray | None:
    """Present values shorter than the registry frame, or not starting with the magic byte 0."""
    short = pc.less(pc.binary_length(values), FRAME_BYTES)
    magic = pc.binary_slice(values, 0, 1)
    bad = pc.or_(short, pc.not_equal(magic, pa.scalar(b"\x00", pa.binary())))
    flags = pc.and_(values.is_valid(), pc.fill_null(bad, True)).to_numpy(zero_copy_only=False)
    return flags if flags.any() else None


def not_json_objects(values: pa.Array, thorough: bool) -> np.ndarray | None:
    """Present values that are not one JSON object: ``{`` … ``}`` on one line (column-wise) or,
    ``thorough``, not parsing to an object at all (as JsonConverter reads them, per value)."""
    flags = _not_parsing_to_objects(values) if thorough else _not_one_line_objects(values)
    return flags if flags.any() else None


def _not_parsing_to_objects(values: pa.Array) -> np.ndarray:
    flags = np.zeros(len(values), dtype=bool)
    for i, value in enumerate(values.to_pylist()):
        if value is None:
            continue
        try:
            flags[i] = not isinstance(json_converter_value(value), dict)
        except DataException:  # what JsonConverter refuses: NaN, ...
            flags[i] = True
    return flags


def _not_one_line_objects(values: pa.Array) -> np.ndarray:
    """Per value: present and not ``{`` ... ``}`` on one line (from the Arrow buffers, no Python loop)."""
    values = values.cast(pa.binary()) if values.type != pa.binary() else values
    n = len(values)
    offsets_buffer, data_buffer = values.buffers()[1], values.buffers()[2]
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[values.offset:values.offset + n + 1].astype(np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    present = values.is_valid().to_numpy(zero_copy_only=False)
    lengths = ends - starts
    bad = lengths < 2
    ok = ~bad
    first = np.zeros(n, dtype=np.uint8)
    last = np.zeros(n, dtype=np.uint8)
    first[ok] = data[starts[ok]]
    last[ok] = data[ends[ok] - 1]
    bad |= (first != ord("{")) | (last != ord("}"))
    span = data[offsets[0]:offsets[-1]]
    breaks = (span == 10) | (span == 13)
    if breaks.any():
        counts = np.add.reduceat(breaks.astype(np.int64), np.minimum(starts - offsets[0], max(len(span) - 1, 0)))
        bad |= ok & (counts > 0) & (lengths > 0)
    return present & bad
