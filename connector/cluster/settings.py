"""The distributed worker's own keys, read as Connect's ``DistributedConfig`` reads them.

A worker is distributed when its properties set ``group.id`` (as in Connect,
where ``connect-distributed`` requires it). Keys Connect reads that have no
use here are named in :func:`unused_keys` with the reason, and the worker logs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from connector.api.errors import ConfigException
from connector.config.worker_keys import not_used_notes

GROUP_ID = "group.id"
MEMBERS_TOPIC = "icefloe.cluster.members.topic"

_REQUIRED = ("config.storage.topic", "offset.storage.topic", "status.storage.topic")

# key prefix or name -> why it has no effect on an icefloe worker of a group (beyond any worker's: worker_keys)
_UNUSED = {
    "offset.storage.topic": "a sink's offsets live in its Iceberg tables and its consumer group: the topic is "
                            "created as Connect creates it, and nothing is written to it",
    "inter.worker.": "icefloe workers forward REST requests to the leader unsigned, as Connect forwards user "
                     "requests; no task-config requests cross workers, so there is nothing to sign",
    "connect.protocol": "membership is icefloe's own heartbeat protocol on the members topic "
                        "(docs/architecture.md), not Connect's group protocol",
    "worker.unsync.backoff.ms": "a worker does not leave the group when it is behind: it reads the topics to "
                                "their end before it acts",
}


def is_distributed(worker: Mapping[str, str]) -> bool:
    return bool(worker.get(GROUP_ID, "").strip())


@dataclass(frozen=True)
class TopicSettings:
    name: str
    partitions: int
    replication: int


@dataclass(frozen=True)
class ClusterSettings:
    group_id: str
    config: TopicSettings
    offsets: TopicSettings
    status: TopicSettings
    members: TopicSettings
    heartbeat_interval_ms: int
    session_timeout_ms: int
    rebalance_timeout_ms: int
    scheduled_rebalance_delay_ms: int
    sync_timeout_ms: int

    @classmethod
    def parse(cls, worker: Mapping[str, str]) -> "ClusterSettings":
        for key in _REQUIRED:
            if not worker.get(key, "").strip():
                raise ConfigException(f'Missing required configuration "{key}" which has no default value.')
        group = worker[GROUP_ID].strip()
        config = _topic(worker, "config", 1)
        if config.partitions != 1:
            raise ConfigException("config.storage.partitions", str(config.partitions),
                                  "The config storage topic must have exactly one partition")
        settings = cls(
            group_id=group, config=config, offsets=_topic(worker, "offset", 25), status=_topic(worker, "status", 5),
            members=TopicSettings(worker.get(MEMBERS_TOPIC, "").strip() or f"__icefloe-members-{group}", 1,
                                  config.replication),
            heartbeat_interval_ms=_int(worker, "heartbeat.interval.ms", 3000),
            session_timeout_ms=_int(worker, "session.timeout.ms", 10000),
            rebalance_timeout_ms=_int(worker, "rebalance.timeout.ms", 60000),
            scheduled_rebalance_delay_ms=_int(worker, "scheduled.rebalance.max.delay.ms", 300000),
            sync_timeout_ms=_int(worker, "worker.sync.timeout.ms", 3000),
        )
        if settings.heartbeat_interval_ms >= settings.session_timeout_ms:
            raise ConfigException("heartbeat.interval.ms", str(settings.heartbeat_interval_ms),
                                  "must be lower than session.timeout.ms")
        return settings


def unused_keys(worker: Mapping[str, str]) -> list[str]:
    """One line per key the worker was given that has no effect here, with the reason."""
    return not_used_notes(worker, _UNUSED)


def _topic(worker: Mapping[str, str], kind: str, partitions: int) -> TopicSettings:
    return TopicSettings(worker[f"{kind}.storage.topic"].strip(),
                         _int(worker, f"{kind}.storage.partitions", partitions),
                         _int(worker, f"{kind}.storage.replication.factor", 3))


def _int(worker: Mapping[str, str], key: str, default: int) -> int:
    text = worker.get(key, "").strip()
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise ConfigException(key, text, "Not a number of type INT") from None
