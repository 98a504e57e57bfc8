"""Small helpers shared by the Iceberg sink's transforms (private to ``smt.iceberg``).

The CDC field names (``CdcConstants``) and lenient struct access. Config
parsing, ``Requirements``, ``copySchemaBasics`` and the schema cache come from
:mod:`smt.base`; Java's ``String.valueOf`` from :mod:`connector.api.java.value_of`.
"""

from __future__ import annotations

from typing import Any

from connector.api.struct import Struct

# --- CDC metadata (CdcConstants) ---------------------------------------------------

OP_INSERT = "I"
OP_UPDATE = "U"
OP_DELETE = "D"

COL_CDC = "_cdc"
COL_OP = "op"
COL_TS = "ts"
COL_OFFSET = "offset"
COL_SOURCE = "source"
COL_TARGET = "target"
COL_KEY = "key"


# --- struct access ----------------------------------------------------------------


def struct_get(struct: Struct, name: str) -> Any:
    """A field's value, or None when the struct's schema has no such field."""
    field = struct.schema.field(name)
    return None if field is None else struct.get(field)
