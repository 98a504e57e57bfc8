"""RecordIsTombstone: true for records whose value is null."""

from __future__ import annotations

from connector.api.config_def import ConfigDef
from connector.api.record import SinkRecord
from smt.base import Predicate


class RecordIsTombstone(Predicate):
    """A predicate which is true for records which are tombstones (i.e. have null value)."""

    CONFIG_DEF = ConfigDef()

    def test(self, record: SinkRecord) -> bool:
        return record.value is None

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"
