"""The distributed worker's keys: read as Connect reads them, refused or reported as Connect would."""

from __future__ import annotations

import pytest

from connector.api.errors import ConfigException
from connector.cluster.settings import ClusterSettings, is_distributed, unused_keys

BASE = {"group.id": "g", "config.storage.topic": "cfg", "offset.storage.topic": "off",
        "status.storage.topic": "st"}


def test_group_id_makes_a_worker_distributed():
    assert is_distributed(BASE)
    assert not is_distributed({"bootstrap.servers": "x"}) and not is_distributed({"group.id": " "})


def test_connects_defaults():
    settings = ClusterSettings.parse(BASE)
    assert (settings.config.partitions, settings.status.partitions, settings.offsets.partitions) == (1, 5, 25)
    assert settings.config.replication == settings.status.replication == 3
    assert (settings.heartbeat_interval_ms, settings.session_timeout_ms, settings.rebalance_timeout_ms,
            settings.scheduled_rebalance_delay_ms, settings.sync_timeout_ms) == (3000, 10000, 60000, 300000, 3000)
    assert settings.members.name == "__icefloe-members-g"


@pytest.mark.parametrize("missing", ["config.storage.topic", "offset.storage.topic", "status.storage.topic"])
def test_a_missing_topic_is_connects_missing_required_configuration(missing):
    with pytest.raises(ConfigException, match=f'Missing required configuration "{missing}" which has no default'):
        ClusterSettings.parse({k: v for k, v in BASE.items() if k != missing})


def test_values_connect_refuses_are_refused():
    with pytest.raises(ConfigException, match="exactly one partition"):
        ClusterSettings.parse({**BASE, "config.storage.partitions": "3"})
    with pytest.raises(ConfigException, match="session.timeout.ms"):
        ClusterSettings.parse({**BASE, "heartbeat.interval.ms": "20000"})
    with pytest.raises(ConfigException, match="Invalid value ten for configuration session.timeout.ms"):
        ClusterSettings.parse({**BASE, "session.timeout.ms": "ten"})


def test_keys_without_effect_are_reported_with_the_reason():
    notes = unused_keys({**BASE, "inter.worker.key.size": "256", "connect.protocol": "sessioned",
                         "session.timeout.ms": "9000"})
    assert [note.split(":")[0] for note in notes] == ["connect.protocol", "inter.worker.key.size",
                                                      "offset.storage.topic"]
    assert all(": not used: " in note for note in notes)
