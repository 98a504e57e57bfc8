"""The Kafka Connect framework's sink-connector settings (``SinkConnectorConfig``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from connector.api.config_def import (
    ConfigDef,
    ConfigType,
    at_least,
    non_empty_string_without_control_chars,
    valid_regex,
    valid_string,
)
from connector.api.errors import ConfigException

ICEBERG_CONNECTOR_CLASSES = (
    "org.apache.iceberg.connect.IcebergSinkConnector",
    "io.tabular.iceberg.connect.IcebergSinkConnector",
)
DEFAULT_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
DEFAULT_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

#: The framework keys of a sink connector (Kafka's ``ConnectorConfig`` + ``SinkConnectorConfig``).
CONNECT_CONFIG = (
    ConfigDef()
    .define("name", ConfigType.STRING, validator=non_empty_string_without_control_chars, importance="high",
            doc="connector name; the consumer group is `connect-<name>`")
    .define("connector.class", ConfigType.STRING, importance="high",
            doc="`org.apache.iceberg.connect.IcebergSinkConnector` or "
                "`io.tabular.iceberg.connect.IcebergSinkConnector` (or the aliases `IcebergSinkConnector`, "
                "`IcebergSink`)")
    .define("tasks.max", ConfigType.INT, 1, at_least(1), "high",
            "maximum number of tasks (Spark partitions) per commit cycle in streaming mode; with "
            "`--until-caught-up` a cycle on Spark runs one task per core Spark has (its default "
            "parallelism), whatever `tasks.max`, splitting partitions' ranges so the tasks get the same "
            "number of records")
    .define("tasks.max.enforce", ConfigType.BOOLEAN, True, importance="low",
            doc="Connect's check that a connector makes no more than `tasks.max` tasks. No effect in icefloe, "
                "which plans its tasks itself and never reports more than `tasks.max` Connect tasks: `false` is "
                "reported at start and by `icefloe validate`")
    .define("topics", ConfigType.LIST, [], importance="high",
            doc="topics to read (comma-separated); exactly one of `topics` / `topics.regex`")
    .define("topics.regex", ConfigType.STRING, "", valid_regex, "high",
            "regex of topics to read (whole-name match; topics starting with `__` are never matched)")
    .define("key.converter", ConfigType.CLASS, None, importance="low",
            doc=f"key converter class; unset: the worker's, else `{DEFAULT_CONVERTER}`")
    .define("value.converter", ConfigType.CLASS, None, importance="low",
            doc=f"value converter class; unset: the worker's, else `{DEFAULT_CONVERTER}`")
    .define("header.converter", ConfigType.CLASS, None, importance="low",
            doc=f"header converter class; unset: the worker's, else `{DEFAULT_HEADER_CONVERTER}`")
    .define("transforms", ConfigType.LIST, [], importance="low",
            doc="SMT aliases, applied in order (see [smt.md](smt.md))")
    .define("predicates", ConfigType.LIST, [], importance="low", doc="predicate aliases")
    .define("config.action.reload", ConfigType.STRING, "restart", valid_string("none", "restart"), "low",
            "`restart`: restart the connector when a config provider says a value it supplied expired (its "
            "TTL). The providers icefloe runs (file, directory, env, as Kafka's) give no TTL, so, as in "
            "Connect with them, no restart ever happens and `none` behaves the same; placeholders are "
            "resolved again whenever the connector starts")
    .define("errors.tolerance", ConfigType.STRING, "none", valid_string("none", "all"), "medium",
            "`none`: the first record that fails in a converter, an SMT or predicate, or its conversion to "
            "the table fails the task, naming topic, partition and offset. `all`: such records are skipped "
            "(logged with `errors.log.enable`, sent to the dead letter queue if one is set) and the rest is "
            "written. Other errors (catalog, broker) always fail the task. See [operations.md](operations.md)")
    .define("errors.retry.timeout", ConfigType.LONG, 0, importance="medium",
            doc="ms during which a converter or SMT failing transiently on a record (a `RetriableException`, "
                "the Schema Registry unreachable) is retried, with backoff from 300 ms; 0: no retry, -1: "
                "forever. Then the task fails (whatever `errors.tolerance`: it is not the record's fault)")
    .define("errors.retry.delay.max.ms", ConfigType.LONG, 60000, importance="medium",
            doc="the longest pause between those retries, and between the re-runs of a cycle that met a "
                "transient fault (see `icefloe.transient.retry-timeout-ms`)")
    .define("errors.log.enable", ConfigType.BOOLEAN, False, importance="medium",
            doc="log each tolerated record error at ERROR with its exception, in Connect's words: "
                "`Error encountered in task <name>-<task>. Executing stage '<STAGE>' with class '<class>'.`")
    .define("errors.log.include.messages", ConfigType.BOOLEAN, False, importance="medium",
            doc="add the record's coordinates to that log line: `, where consumed record is {topic='t', "
                "partition=p, offset=o, timestamp=ts, timestampType=CreateTime}` (never its key or value)")
    .define("errors.deadletterqueue.topic.name", ConfigType.STRING, "", importance="medium",
            doc="with `errors.tolerance=all`, the topic that receives each skipped record with its original "
                "key, value, headers and timestamp, exactly once across crashes and re-runs; created when "
                "missing (1 partition). Must not be one of the topics nor match `topics.regex`. The producer "
                "takes `producer.override.*`")
    .define("errors.deadletterqueue.topic.replication.factor", ConfigType.SHORT, 3, importance="medium",
            doc="replication factor of the DLQ topic when icefloe creates it (capped by the number of "
                "brokers, with a warning)")
    .define("errors.deadletterqueue.context.headers.enable", ConfigType.BOOLEAN, False, importance="medium",
            doc="add Connect's `__connect.errors.*` headers to each DLQ record (topic, partition, offset, "
                "connector.name, task.id, stage, class.name, exception.class.name, exception.message, "
                "exception.stacktrace)")
)

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
    errors_retry_delay_max_ms: int = 60000
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
    values = CONNECT_CONFIG.parse(props)
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
        errors_tolerance=values["errors.tolerance"],
        errors_retry_delay_max_ms=values["errors.retry.delay.max.ms"],
        raw=dict(props),
    )


def _converter_config(
    props: Mapping[str, Any], worker: Mapping[str, str], prop: str, own: str | None
) -> dict[str, str]:
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
