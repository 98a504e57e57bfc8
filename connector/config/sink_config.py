"""A whole connector config: framework keys, Iceberg keys, converters and SMTs, validated up front.

``SinkConfig.parse`` is what runs before any Spark work starts: it parses every
declared key, instantiates the converters and the transformation chain once (so
a bad class name or SMT setting fails here, naming the key), and lists the keys
nothing recognised, as Connect reports unused configs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import converters
from connector.api.errors import ConfigException
from connector.api.suggest import did_you_mean
from connector.config.catalog_config import with_absolute_local_paths
from connector.config.connect_config import (
    CONNECT_CONFIG,
    PASSTHROUGH_PREFIXES,
    ConnectConfig,
    parse_connect_config,
)
from connector.config.iceberg_config import ICEBERG_CONFIG, IcebergConfig, is_iceberg_key, parse_iceberg_config
from connector.config.icefloe_config import ICEFLOE_CONFIG, IcefloeConfig, is_icefloe_key, parse_icefloe_config
from connector.config.no_effect import no_effect_warnings
from connector.config.worker_keys import offset_flush_timeout_s
from smt.chain import TransformationChain


@dataclass(frozen=True)
class SinkConfig:
    """Everything a job needs to know about one connector, immutable and picklable."""

    connect: ConnectConfig
    iceberg: IcebergConfig
    icefloe: IcefloeConfig
    props: dict[str, str]
    worker: dict[str, str] = field(default_factory=dict)
    unused_keys: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def __repr__(self) -> str:
        # Not the dataclass repr: props, worker and the catalog settings hold resolved secrets.
        return f"SinkConfig(name={self.name!r})"

    @property
    def name(self) -> str:
        return self.connect.name

    @property
    def group_id(self) -> str:
        return self.iceberg.connect_group_id or self.connect.group_id

    @property
    def offset_flush_timeout_s(self) -> float:
        """How long the mirror of a cycle's offsets to :attr:`group_id` may wait (the worker's key)."""
        return offset_flush_timeout_s(self.worker)

    @staticmethod
    def parse(props: Mapping[str, Any], worker: Mapping[str, str] | None = None) -> "SinkConfig":
        props = with_absolute_local_paths(_stringify(props))
        worker = dict(worker or {})
        offset_flush_timeout_s(worker)  # a bad value fails here, naming the key, not after the first cycle
        connect = parse_connect_config(props, worker)
        iceberg = parse_iceberg_config(props)
        config = SinkConfig(
            connect=connect,
            iceberg=iceberg,
            icefloe=parse_icefloe_config(props),
            props=props,
            worker=worker,
            unused_keys=tuple(unknown_keys(props)),
            warnings=tuple(_warnings(connect, props)),
        )
        config.check_plugins()
        return config

    def check_plugins(self) -> None:
        """Instantiate converters and SMTs once so their config errors surface before Spark starts."""
        connect = self.connect
        converters.load(connect.key_converter, connect.key_converter_config, is_key=True)
        converters.load(connect.value_converter, connect.value_converter_config, is_key=False)
        converters.load_header_converter(connect.header_converter, connect.header_converter_config)
        TransformationChain.from_config(self.props)


def load_connector_file(path: str | Path) -> dict[str, str]:
    """Read a connector config file: either ``{"name", "config": {...}}`` (the REST body) or a flat map."""
    try:
        document = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigException(f"Connector config file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise ConfigException(f"Connector config {path} is not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ConfigException(f"Connector config {path} must be a JSON object")
    if isinstance(document.get("config"), dict):
        props = dict(document["config"])
        if "name" in document:
            if "name" in props and str(props["name"]) != str(document["name"]):
                raise ConfigException(
                    f"Connector name configuration ({props['name']}) doesn't match connector name "
                    f"({document['name']}) in {path}"
                )
            props["name"] = document["name"]
        return _stringify(props)
    return _stringify(document)


def _stringify(props: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in props.items():
        if value is None:
            raise ConfigException(key, None, "Null value can not be supplied as the configuration value.")
        out[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def is_known_key(key: str) -> bool:
    """Whether some part of icefloe reads ``key`` (the others are reported as unused, as Connect does)."""
    return key in CONNECT_CONFIG or key.startswith(PASSTHROUGH_PREFIXES) or key.startswith("errors.") \
        or is_iceberg_key(key) or is_icefloe_key(key)


def unknown_key_note(key: str) -> str:
    """Connect's line for a key nothing reads, with the declared key it is closest to (a typo?)."""
    known = [*CONNECT_CONFIG.names(), *ICEBERG_CONFIG.names(), *ICEFLOE_CONFIG.names()]
    return f"The configuration '{key}' was supplied but isn't a known config.{did_you_mean(key, known)}"


def unknown_keys(props: Mapping[str, Any]) -> list[str]:
    """The keys of ``props`` nothing reads (also of a config that does not parse: a typo may be why)."""
    return sorted(key for key in props if not is_known_key(key))


def _warnings(connect: ConnectConfig, props: Mapping[str, str]) -> list[str]:
    """What a user should know before the job starts: settings that combine badly or have no effect."""
    notes = no_effect_warnings(props, CONNECT_CONFIG.merged(ICEBERG_CONFIG))
    raw = connect.raw
    if str(raw.get("errors.deadletterqueue.topic.name", "")).strip() and connect.errors_tolerance != "all":
        notes.append("errors.deadletterqueue.topic.name is set but errors.tolerance=none: as in Kafka Connect, "
                     "the first bad record fails the task and nothing is written to the dead letter queue")
    return notes
