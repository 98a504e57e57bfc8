"""A ConfigDef reaches Spark executors pickled: its required keys must stay required there."""

from __future__ import annotations

import pickle

import pytest

from connector.api.config_def import NO_DEFAULT, ConfigDef, ConfigType
from connector.api.errors import ConfigException


def test_a_required_key_is_still_required_after_pickling():
    config_def = ConfigDef().define("topics", ConfigType.STRING, doc="the topics").define(
        "flush.size", ConfigType.INT, 10, doc="records per file")
    copied = pickle.loads(pickle.dumps(config_def))

    assert copied.config_keys["topics"].default is NO_DEFAULT
    with pytest.raises(ConfigException, match="topics"):
        copied.parse({})
    assert copied.parse({"topics": "a"})["flush.size"] == 10
