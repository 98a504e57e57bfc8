"""A Connect Timestamp whose instant Python's ``datetime`` cannot hold.

Kafka's Timestamp values are ``java.util.Date``: any 64-bit count of
milliseconds from the epoch, so years far beyond 9999 (``Long.MAX_VALUE`` is in
year 292,278,994). Python's ``datetime`` stops at year 9999. Such a value is
carried as an :class:`OutOfRangeTimestamp` holding the exact milliseconds:
converters, SMTs that pass it along and casts to a number (``Timestamp.fromLogical``)
see the same long Kafka would; what needs a calendar date (formatting it as
text, writing it to an Iceberg timestamp column) refuses it with a DataException
naming the value, where Java overflows as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from connector.api.errors import DataException

JAVA_LONG_MIN = -(2**63)
JAVA_LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class OutOfRangeTimestamp:
    """Epoch milliseconds of a ``java.util.Date`` outside ``datetime``'s years 1-9999."""

    millis: int

    def __post_init__(self) -> None:
        if not JAVA_LONG_MIN <= self.millis <= JAVA_LONG_MAX:
            raise DataException(f"Timestamp {self.millis} ms from the epoch does not fit a Java long")

    def __repr__(self) -> str:
        return f"Timestamp({self.millis} ms from the epoch, outside years 1-9999)"
