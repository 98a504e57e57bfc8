"""Where a partition with no committed position starts: Connect's ``auto.offset.reset``.

The connector's ``consumer.override.auto.offset.reset`` over the worker's
``consumer.auto.offset.reset`` over Connect's sink default ``earliest``
(already merged into the consumer config, ``none`` spelled ``error`` as
librdkafka does): ``earliest`` starts at the log start, ``latest`` at the end
(the offset a reader at the end would fetch next), ``none`` fails naming the
partitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from connector.api.errors import ConnectException
from connector.api.record import TopicPartition
from connector.kafka.offsets import earliest_offsets, end_offsets

EARLIEST = ("earliest", "smallest", "beginning")
LATEST = ("latest", "largest", "end")


class NoOffsetError(ConnectException):
    """``auto.offset.reset=none`` and a partition has no committed position."""


def reset_offsets(client_conf: Mapping[str, object],
                  partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    """The start of each of ``partitions`` (which have no committed position) by ``auto.offset.reset``."""
    partitions = sorted(set(partitions))
    if not partitions:
        return {}
    policy = str(client_conf.get("auto.offset.reset", "earliest")).strip().lower()
    if policy in EARLIEST:
        return earliest_offsets(client_conf, partitions)
    if policy in LATEST:
        return end_offsets(client_conf, partitions)
    if policy in ("error", "none"):
        raise NoOffsetError(
            "No committed offsets for " + ", ".join(f"{t}[{p}]" for t, p in partitions)
            + " and auto.offset.reset=none: set consumer.override.auto.offset.reset to earliest or latest, "
            "or set the connector's offsets")
    raise ConnectException(f"Unknown auto.offset.reset value {policy!r}: expected earliest, latest or none")
