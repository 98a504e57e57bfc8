"""One line, at every start, saying where each partition resumes and why.

A job resumes each partition from the offsets its tables recorded, else from
a consumer group's (Tabular's ``cg-control-<name>``, then ``connect-<name>``),
else from ``auto.offset.reset``. When ``iceberg.tables`` changed under a name
that has run before, the new tables hold no offsets and the group's take over:
the job then reads only what arrived after the old tables' last commit, and
without this line a user sees ``records_read: 0`` and no reason. Resuming from a
group while the tables hold no offsets is therefore a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from connector.api.record import TopicPartition

log = logging.getLogger(__name__)


Offsets = Mapping[TopicPartition, int]


def log_resume_points(from_tables: Offsets, from_groups: Mapping[str, Offsets], from_reset: Offsets, *,
                      tables: tuple[str, ...], reset_policy: str) -> None:
    """Log where each partition resumes (``from_groups``: per group, the partitions it placed)."""
    parts = []
    if from_tables:
        parts.append(f"{_partitions(from_tables)} from the offsets the tables recorded ({', '.join(tables)})")
    for group, placed in from_groups.items():
        if placed:
            parts.append(f"{_partitions(placed)} from consumer group {group}'s offsets, since no table holds "
                         "offsets for them")
    if from_reset:
        parts.append(f"{_partitions(from_reset)} from auto.offset.reset={reset_policy}, since neither the tables "
                     "nor the consumer groups hold a position")
    if not parts:
        return
    from_a_group = any(from_groups.values())
    level = logging.WARNING if from_a_group and not from_tables else logging.INFO
    hint = (": the tables hold no offsets yet (iceberg.tables changed under a connector name that ran before, "
            "or a takeover from Kafka Connect?); records before these positions are not read, reset the "
            "group's offsets to read them") if level == logging.WARNING else ""
    log.log(level, "Resuming %s%s", "; ".join(parts), hint)


def _partitions(offsets: Offsets) -> str:
    """``orders[0]@120, orders[1]@98``: each partition at the offset it resumes from (at most 20 shown)."""
    shown = [f"{topic}[{partition}]@{offset}" for (topic, partition), offset in sorted(offsets.items())]
    return ", ".join(shown[:20]) + (f" and {len(shown) - 20} more" if len(shown) > 20 else "")
