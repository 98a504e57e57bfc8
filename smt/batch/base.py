"""What a column-wise form of an SMT is, and the registry of the forms for schemaless values (Connect Maps).

Each batch form wraps a configured per-record transformation and follows its
``apply_schemaless`` (or ``apply``) line by line, on whole columns. Where the
per-record code would raise, or where the result could depend on something
the batch representation does not keep (see :mod:`smt.batch.view`), the
batch form raises :class:`Declined` and the caller runs the per-record path
for the whole batch, which then raises the SMT's own error with the failing
record's coordinates.

Batch forms are registered for exact classes (a user's subclass may override
``apply``): a :class:`FormRegistry` answers None for anything else.
"""

from __future__ import annotations

import abc
from typing import Any, Callable

from smt.batch.kernels import has_values
from smt.batch.view import RecordBatchView


class BatchTransform(abc.ABC):
    """The batch form of one configured transformation."""

    def __init__(self, transformation: Any):
        self.transformation = transformation

    @abc.abstractmethod
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        """The transformation applied to every record of ``view``, column-wise."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.transformation!r})"


class NullPassingForm(BatchTransform):
    """The form of an SMT that returns a record with a null key/value unchanged (``PASSES_NULL``, in effect).

    A batch whose values are all null is returned as it is; any other goes to :meth:`apply_to_values`.
    """

    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        if not has_values(view.value.array):
            return view  # every value is null: the records are unchanged
        return self.apply_to_values(view)

    @abc.abstractmethod
    def apply_to_values(self, view: RecordBatchView) -> RecordBatchView:
        """The transformation of a batch with a value that is not null."""


class FormRegistry:
    """Batch forms by the exact class of the transformation they follow."""

    def __init__(self) -> None:
        self._factories: dict[type, Callable[[Any], BatchTransform | None]] = {}

    def register(self, *classes: type) -> Callable[[type], type]:
        """Register a :class:`BatchTransform` subclass (or factory) for exact transformation classes."""

        def decorate(factory: type) -> type:
            for cls in classes:
                self._factories[cls] = factory
            return factory

        return decorate

    def form_of(self, transformation: Any) -> BatchTransform | None:
        """The form of a configured transformation, or None when it has none (for this config)."""
        factory = self._factories.get(type(transformation))
        return None if factory is None else factory(transformation)


#: The forms for schemaless values (Connect Maps); the typed ones are ``smt.batch.typed_rules.TYPED_FORMS``.
SCHEMALESS_FORMS = FormRegistry()
register = SCHEMALESS_FORMS.register
