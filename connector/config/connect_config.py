"""The Kafka Connect framework's sink-connector settings (``SinkConnectorConfig``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from connector.api.errors import ConfigException
from connector.config.definitions import (
    ConfigKey,
    ConfigType,
    at_least,
    non_empty_string,
    one_of,
    parse_config,
    valid_regex,
)

ICEBERG_CONNECTOR_CLASSES = (
    "org.apache.iceberg.connect.IcebergSinkConnector",
    "io.tabular.iceberg.connect.IcebergSinkConnector",
)
DEFAULT_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
DEFAULT_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

CONNECT_KEYS: dict[str, ConfigKey] = {
    k.name: k
    for k in (
        ConfigKey("name", ConfigType.STRING, doc="Connector name; the consumer group is connect-<name>.",
                  validator=non_empty_string),
        ConfigKey("connector.class", ConfigType.STRING, doc="The Iceberg sink connector class."),
        ConfigKey("tasks.max", ConfigType.INT, 1, "Maximum number of tasks (Spark partitions) per cycle.",
                  at_least(1)),
        ConfigKey("tasks.max.enforce", ConfigType.BOOLEAN, True, "Deprecated; accepted for compatibility."),
        ConfigKey("topics", ConfigType.LIST, [], "Topics to consume."),
        ConfigKey("topics.regex", ConfigType.STRING, "", "Regex of topics to consume.", valid_regex),
        ConfigKey("key.converter", ConfigType.STRING, None, "Key converter class."),
        ConfigKey("value.converter", ConfigType.STRING, None, "Value converter class."),
        ConfigKey("header.converter", ConfigType.STRING, None, "Header converter class."),
        ConfigKey("transforms", ConfigType.LIST, [], "Aliases of the single-message transforms."),
        ConfigKey("predicates", ConfigType.LIST, [], "Aliases of the predicates."),
        ConfigKey("config.action.reload", ConfigType.STRING, "restart", "Accepted for compatibility.",
                  one_of("none", "restart")),
        ConfigKey("errors.tolerance", ConfigType.STRING, "none", "Error tolerance.", one_of("none", "all")),
        ConfigKey("errors.retry.timeout", ConfigType.LONG, 0, "Retry timeout in ms for retriable errors."),
        ConfigKey("errors.retry.delay.max.ms", ConfigType.LONG, 60000, "Max retry backoff in ms."),
        ConfigKey("errors.log.enable", ConfigType.BOOLEAN, False, "Log failed records."),
        ConfigKey("errors.log.include.messages", ConfigType.BOOLEAN, False, "Include record coordinates."),
        ConfigKey("errors.deadletterqueue.topic.name", ConfigType.STRING, "", "Dead-letter queue topic."),
        ConfigKey("errors.deadletterqueue.topic.replication.factor", ConfigType.INT, 3, "DLQ replication."),
        ConfigKey("errors.deadletterqueue.context.headers.enable", ConfigType.BOOLEAN, False,
                  "Add __connect.errors.* headers to DLQ records."),
    )
}

# Key prefixes the framework hands to other components.
PASSTHROUGH_PREFIXES = (
    "key.converter.", "value.converter.", "header.converter.", "transforms.", "predicates.",
    "consumer.override.", "admin.override.", "producer.override.",
)


@dataclass(frozen=True)
class ConnectConfig:
    """Typed framework settings of one sink connector."""

    name: str
    connector_class: str
    tasks_max: int
    topics: tuple[str, ...]
    topics_regex: str | None
    key_converter: str
    value_converter: str
    header_converter: str
    key_converter_config: dict[str, str] = field(default_factory=dict)
    value_converter_config: dict[str, str] = field(default_factory=dict)
    header_converter_config: dict[str, str] = field(default_factory=dict)
    errors_tolerance: str = "none"
    raw: Mapping[str, str] = field(default_factory=dict)

    @property
    def group_id(self) -> str:
        """Connect's consumer group for this connector."""
        return f"connect-{self.name}"


def prefixed(props: Mapping[str, Any], prefix: str) -> dict[str, str]:
    """``props`` under ``prefix``, with the prefix stripped (Connect's ``originalsWithPrefix``)."""
    return {k[len(prefix):]: str(v) for k, v in props.items() if k.startswith(prefix)}


def parse_connect_config(props: Mapping[str, Any], worker: Mapping[str, str] | None = None) -> ConnectConfig:
    """Validate the framework keys; converters default to the worker's, as in Connect."""
    worker = worker or {}
    values = parse_config(CONNECT_KEYS, props)
    _check_connector_class(values["connector.class"])
    _check_topics(values)
    key_conv = values["key.converter"] or worker.get("key.converter") or DEFAULT_CONVERTER
    value_conv = values["value.converter"] or worker.get("value.converter") or DEFAULT_CONVERTER
    header_conv = values["header.converter"] or worker.get("header.converter") or DEFAULT_HEADER_CONVERTER
    return ConnectConfig(
        name=values["name"],
        connector_class=values["connector.class"],
        tasks_max=values["tasks.max"],
        topics=tuple(values["topics"]),
        topics_regex=values["topics.regex"] or None,
        key_converter=key_conv,
        value_converter=value_conv,
        header_converter=header_conv,
        key_converter_config=_converter_config(props, worker, "key.converter", values["key.converter"]),
        value_converter_config=_converter_config(props, worker, "value.converter", values["value.converter"]),
        header_converter_config=_converter_config(props, worker, "header.converter", values["header.converter"]),
        errors_tolerance=values["errors.tolerance"].lower(),
        raw=dict(props),
    )


def _converter_config(props: Mapping[str, Any], worker: Mapping[str, str], prop: str, own: str | None) -> dict[str, str]:
    # A converter named by the connector gets only the connector's settings; one
    # inherited from the worker gets the worker's (Connect's Plugins.newConverter).
    # With neither (no worker file), icefloe's built-in default takes the
    # connector's settings, so `value.converter.schemas.enable=false` alone works.
    source = worker if not own and worker.get(prop) else props
    return prefixed(source, prop + ".")


def _check_connector_class(value: str) -> None:
    accepted = ICEBERG_CONNECTOR_CLASSES + ("IcebergSinkConnector", "IcebergSink")
    if value not in accepted:
        raise ConfigException(
            "connector.class", value,
            "icefloe runs the Iceberg sink; use org.apache.iceberg.connect.IcebergSinkConnector "
            "(or io.tabular.iceberg.connect.IcebergSinkConnector)",
        )


def _check_topics(values: dict[str, Any]) -> None:
    topics, regex = values["topics"], values["topics.regex"]
    dlq = values["errors.deadletterqueue.topic.name"]
    if topics and regex:
        raise ConfigException("topics and topics.regex are mutually exclusive options, but both are set.")
    if not topics and not regex:
        raise ConfigException("Must configure one of topics or topics.regex")
    if dlq and dlq in topics:
        raise ConfigException(
            f"The DLQ topic '{dlq}' may not be included in the list of topics "
            f"('topics=[{', '.join(topics)}]') consumed by the connector"
        )
    if dlq and regex and re.fullmatch(regex, dlq):
        raise ConfigException(
            f"The DLQ topic '{dlq}' may not be matched by the regex for the topics "
            f"('topics.regex={regex}') consumed by the connector"
        )
