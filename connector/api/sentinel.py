"""Marker values of which there is exactly one each (``jackson.MISSING``, ``smt.batch.view.ALL``)."""

from __future__ import annotations

from typing import TypeVar

_S = TypeVar("_S", bound="Sentinel")


class Sentinel:
    """The base of a marker class with a single instance.

    Constructing the class again gives that instance, and so do ``copy`` and
    ``pickle`` (which construct it again), so a marker can be told by ``is``
    even after a value crossed a process boundary.
    """

    def __new__(cls: type[_S]) -> _S:
        instance = cls.__dict__.get("_instance")
        if instance is None:
            instance = super().__new__(cls)
            cls._instance = instance  # on the subclass itself: one instance per marker class
        return instance
