"""Where a chain finds an SMT's column-wise forms: every SMT module of ``smt.batch`` registers its own when imported.

Each such module is named as the module of ``smt.transforms`` it follows and holds its form for Maps, its
form for Structs or both; each form declines (a named reason) what it cannot do exactly as that module does.
The forms are registered for exact classes (a user's subclass may override ``apply``): for anything else
both lookups answer None.
"""

from __future__ import annotations

from typing import Any

import smt.batch.cast
import smt.batch.extract_field
import smt.batch.filter
import smt.batch.flatten
import smt.batch.hoist_field
import smt.batch.insert_field
import smt.batch.mask_field
import smt.batch.regex_router
import smt.batch.replace_field
import smt.batch.set_schema_metadata
import smt.batch.timestamp_converter
import smt.batch.timestamp_router  # noqa: F401 - registered on import
from smt.batch.base import SCHEMALESS_FORMS, BatchTransform
from smt.batch.typed_rules import TYPED_FORMS


def batch_form(transformation: Any) -> BatchTransform | None:
    """The form of a configured transformation for schemaless views, or None when it has none (for this config)."""
    return SCHEMALESS_FORMS.form_of(transformation)


def typed_batch_form(transformation: Any) -> BatchTransform | None:
    """The form of a configured transformation for typed views (exact class only), or None."""
    return TYPED_FORMS.form_of(transformation)
