"""Connect worker properties beyond the Kafka connection: the ones icefloe reads, and the ones it cannot honour.

A worker file brought from Kafka Connect (``connect-standalone.properties``,
``connect-distributed.properties``) keeps working as it is. Most of its keys
are read (the connection, the converters, ``consumer.*``, the listeners, the
group's keys); the ones below are read here; the rest that Connect's stock
files set, which change nothing in icefloe, are named with the reason once
when a worker or a job starts, as Connect itself logs its worker config.
"""

from __future__ import annotations

from typing import Mapping

from connector.api.errors import ConfigException

#: Connect's ``offset.flush.timeout.ms``: how long a sink task's offset commit may wait. icefloe's offsets are
#: in the table snapshot; what waits this long is the mirror of them to the consumer group after each cycle.
OFFSET_FLUSH_TIMEOUT_MS = "offset.flush.timeout.ms"
DEFAULT_OFFSET_FLUSH_TIMEOUT_MS = 5000

_SOURCE_ONLY = "it applies to source connectors; icefloe runs sink connectors only"

#: key, or prefix ending in "." → why setting it changes nothing in icefloe (and what does that job instead).
NOT_USED: dict[str, str] = {
    "offset.flush.interval.ms":
        "a sink's offsets are committed with its table snapshots once a cycle: the connector's "
        "iceberg.control.commit.interval-ms sets how often",
    "offset.storage.file.filename":
        "a sink's offsets live in its Iceberg tables' snapshot summaries (and are mirrored to its consumer "
        "group), not in a file",
    "plugin.path":
        "converters, SMTs, predicates and config providers are icefloe's Python implementations of the named "
        "classes; no jars are loaded",
    "plugin.discovery": "no jars are loaded, so there are no plugins to scan",
    "metric.reporters": "icefloe's metrics are served for Prometheus at /metrics; Java reporters cannot load",
    "topic.creation.enable": _SOURCE_ONLY,
    "exactly.once.source.support": _SOURCE_ONLY,
}


def offset_flush_timeout_s(worker: Mapping[str, str]) -> float:
    """The worker's ``offset.flush.timeout.ms`` in seconds (Connect's default: 5 s)."""
    text = worker.get(OFFSET_FLUSH_TIMEOUT_MS, "").strip()
    if not text:
        return DEFAULT_OFFSET_FLUSH_TIMEOUT_MS / 1000
    try:
        millis = int(text)
    except ValueError:
        raise ConfigException(OFFSET_FLUSH_TIMEOUT_MS, text, "Not a number of type LONG") from None
    if millis <= 0:
        raise ConfigException(OFFSET_FLUSH_TIMEOUT_MS, text, "Value must be at least 1")
    return millis / 1000


def not_used_notes(worker: Mapping[str, str], more: Mapping[str, str] | None = None) -> list[str]:
    """One line per key of ``worker`` that changes nothing here, with the reason (``more``: a mode's own)."""
    reasons = {**NOT_USED, **(more or {})}
    notes = []
    for key in sorted(worker):
        for name, reason in reasons.items():
            if key == name or (name.endswith(".") and key.startswith(name)):
                notes.append(f"{key}: not used: {reason}")
    return notes
