"""What a column-wise form of an SMT is, and the registry of the forms for schemaless values (Connect Maps).

Each batch form wraps a configured per-record transformation and follows its
``apply_schemaless`` (or ``apply``) line by line, on whole columns. Where the
per-record code would raise, or where the result could depend on something
the batch representation does not keep (see :mod:`smt.batch.view`), the
batch form raises :class:`Declined` and the caller runs the per-record path
for the whole batch, which then raises the SMT's own error with the failing
record's coordinates.

Batch forms are registered for exact classes (a user's subclass may override
``apply``): :func:`batch_form` returns None for anything else.
"""

from __future__ import annotations

import abc
from typing import Any, Callable

from smt.batch.view import RecordBatchView

_REGISTRY: dict[type, Callable[[Any], "BatchTransform | None"]] = {}


class BatchTransform(abc.ABC):
    """The batch form of one configured transformation."""

    def __init__(self, transformation: Any):
        self.transformation = transformation

    @abc.abstractmethod
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        """The transformation applied to every record of ``view``, column-wise."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.transformation!r})"


def register(*classes: type) -> Callable[[type], type]:
    """Register a :class:`BatchTransform` subclass (or factory) for exact transformation classes."""

    def decorate(factory: type) -> type:
        for cls in classes:
            _REGISTRY[cls] = factory
        return factory

    return decorate


def batch_form(transformation: Any) -> BatchTransform | None:
    """The batch form of a configured transformation, or None when it has none (for this config)."""
    factory = _REGISTRY.get(type(transformation))
    if factory is None:
        return None
    return factory(transformation)
