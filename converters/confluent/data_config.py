"""What the configs of Confluent's data classes share.

The keys of ``AvroDataConfig``, ``JsonSchemaDataConfig`` and
``ProtobufDataConfig`` are mostly flags, and each sets the data class's
keyword argument of the same name with underscores for dots
(``flatten.singleton.unions`` -> ``flatten_singleton_unions``).
"""

from __future__ import annotations

from typing import Any, Mapping

from connector.api.config_def import ConfigDef, ConfigKey, ConfigType


def flag(name: str, default: bool, importance: str, doc: str) -> ConfigKey:
    """A boolean key."""
    return ConfigKey(name, ConfigType.BOOLEAN, default, importance=importance, doc=doc)


def keyword_arguments(config: ConfigDef, values: Mapping[str, Any]) -> dict[str, Any]:
    """The parsed ``values`` of ``config``'s keys as the data class's keyword arguments."""
    return {name.replace(".", "_"): values[name] for name in config.names()}
