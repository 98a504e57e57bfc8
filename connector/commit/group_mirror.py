"""The tables' offsets mirrored to the connector's consumer group, caught up when a mirror fails.

After each cycle the coordinator commits the offsets it covered to
``connect-<name>``, so that lag tools and a move back to Kafka Connect see
where the tables stand. The tables hold the truth, so a mirror that fails
(the broker unreachable, or the group still has a member: a killed worker's,
which the broker has not expired yet) fails no cycle. Its offsets wait here,
merged with later cycles' offsets, and are committed again after every later
cycle, idle ones included, until the group has them.

While they wait, :attr:`GroupMirror.lag` is by how many records the group's
offsets differ from the tables' (the ``icefloe_group_mirror_lag_records``
gauge and the cycle's log line), one warning says why (again only when the
reason changes), and one line says when the group caught up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from connector.api.record import TopicPartition
from connector.config.worker_keys import DEFAULT_OFFSET_FLUSH_TIMEOUT_MS
from connector.kafka.group_offsets import commit_group_offsets, group_occupied, read_group_offsets

log = logging.getLogger(__name__)

Offsets = Mapping[TopicPartition, int]

#: How long one mirror attempt may wait for the broker unless the worker sets ``offset.flush.timeout.ms``
#: (Connect's default). The attempt runs between cycles, and a broker that is away must not hold the next cycle
#: (which is what notices the outage and rides it out); what is not committed in time is tried after the next.
MIRROR_TIMEOUT = DEFAULT_OFFSET_FLUSH_TIMEOUT_MS / 1000


class GroupMirror:
    """The offsets not yet mirrored to ``group_id``, and how far the group is off while they wait."""

    def __init__(self, client_conf: Mapping[str, object], group_id: str, *, timeout: float = MIRROR_TIMEOUT,
                 commit: Callable[..., None] = commit_group_offsets,
                 read: Callable[..., dict[TopicPartition, int]] = read_group_offsets):
        self.client_conf = client_conf
        self.group_id = group_id
        self.timeout = timeout
        self._commit = commit
        self._read = read
        self.pending: dict[TopicPartition, int] = {}
        self.lag = 0
        self._failing: str | None = None  # why the last attempt failed, to warn once per reason

    def lagging(self) -> dict | None:
        """While offsets wait: ``{"group", "records", "reason"}`` (what ``/status`` shows), else None."""
        if not self.pending or self._failing is None:
            return None
        return {"group": self.group_id, "records": self.lag, "reason": self._failing}

    def mirror(self, offsets: Offsets) -> None:
        """Commit ``offsets`` (a cycle's), with any still pending from earlier cycles."""
        for tp, offset in offsets.items():
            self.pending[tp] = max(offset, self.pending.get(tp, offset))
        self.retry()

    def retry(self) -> None:
        """Commit the pending offsets again, if there are any."""
        if not self.pending:
            return
        try:
            self._commit(self.client_conf, self.group_id, self.pending, timeout=self.timeout)
        except Exception as exc:  # noqa: BLE001 - a failed mirror must not fail a committed cycle
            self._lagging(exc)
            return
        if self._failing is not None:
            log.info("Consumer group %s caught up with the tables: %s", self.group_id, _positions(self.pending))
        self.pending, self.lag, self._failing = {}, 0, None

    def _lagging(self, exc: Exception) -> None:
        if group_occupied(exc):  # the broker answers: ask it how far the group is off
            self.lag = self._difference()
            reason = ("the group still has a member (a Kafka Connect worker running this connector, or a "
                      "killed one the broker has not expired yet)")
        else:  # the broker itself failed: keep the last figure rather than send another client after it
            reason = str(exc) or f"{type(exc).__name__} after {self.timeout:g} s"  # a timeout has no text
        if reason != self._failing:
            log.warning("Could not commit offsets to consumer group %s, which is %d record(s) off the tables; "
                        "retried after each cycle: %s", self.group_id, self.lag, reason)
        self._failing = reason

    def _difference(self) -> int:
        """Records between the group's offsets and the pending ones (a partition without any: all)."""
        try:
            held = self._read(self.client_conf, self.group_id, list(self.pending))
        except Exception:  # noqa: BLE001 - the broker may be what failed the commit: keep the last figure
            return self.lag
        return sum(abs(offset - held.get(tp, 0)) for tp, offset in self.pending.items())


def _positions(offsets: Offsets) -> str:
    return ", ".join(f"{topic}[{partition}]@{offset}" for (topic, partition), offset in sorted(offsets.items()))
