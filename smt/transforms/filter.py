"""Filter: drop every record; meant to be used with a predicate."""

from __future__ import annotations

from connector.api.config_def import ConfigDef
from connector.api.record import SinkRecord
from smt.base import Transformation


class Filter(Transformation):
    """Drops all records, filtering them from subsequent transformations in the chain.

    This is intended to be used conditionally to filter out records matching (or
    not matching) a particular predicate.
    """

    CONFIG_DEF = ConfigDef()

    def apply(self, record: SinkRecord) -> None:
        return None
