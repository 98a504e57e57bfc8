"""Single message transforms (SMTs) and predicates, by their Kafka Connect class names.

``load("org.apache.kafka.connect.transforms.InsertField$Value", {...})``
returns a configured transformation with ``apply(record) -> SinkRecord | None``;
``load_predicate("TopicNameMatches", {"pattern": "orders-.*"})`` a configured
predicate with ``test(record) -> bool``. Names are resolved like Connect does:
the Java class name, an unambiguous simple-name alias (``RegexRouter``,
``Filter``, ``TopicNameMatches``; ``$Key``/``$Value`` variants need their full
names), or ``module:Class`` for a user's own Python plugin.

``TransformationChain`` (``smt.chain``) builds the whole ``transforms`` /
``predicates`` chain of a connector config.
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping

from connector.api.errors import ConfigException
from connector.api.plugins import resolve_class
from connector.api.suggest import did_you_mean

_KAFKA = "org.apache.kafka.connect.transforms"
_SIDED = {
    "Cast": "cast", "ExtractField": "extract_field", "Flatten": "flatten", "HeaderFrom": "header_from",
    "HoistField": "hoist_field", "InsertField": "insert_field", "MaskField": "mask_field",
    "ReplaceField": "replace_field", "SetSchemaMetadata": "set_schema_metadata",
    "TimestampConverter": "timestamp_converter",
}
_PLAIN = {
    "DropHeaders": "drop_headers", "Filter": "filter", "InsertHeader": "insert_header",
    "RegexRouter": "regex_router", "TimestampRouter": "timestamp_router", "ValueToKey": "value_to_key",
}
_ICEBERG = {
    "CopyValue": "smt.iceberg.copy_value:CopyValue",
    "DebeziumTransform": "smt.iceberg.debezium:DebeziumTransform",
    "DmsTransform": "smt.iceberg.dms:DmsTransform",
    "JsonToMapTransform": "smt.iceberg.json_to_map:JsonToMapTransform",
    "KafkaMetadataTransform": "smt.iceberg.kafka_metadata:KafkaMetadataTransform",
    "MongoDebeziumTransform": "smt.iceberg.mongo_debezium:MongoDebeziumTransform",
}

#: Java class name (``$Key``/``$Value`` included) -> ``module:Class`` of the Python implementation.
TRANSFORMS: dict[str, str] = {}
for _name, _module in _SIDED.items():
    TRANSFORMS[f"{_KAFKA}.{_name}$Key"] = f"smt.transforms.{_module}:Key"
    TRANSFORMS[f"{_KAFKA}.{_name}$Value"] = f"smt.transforms.{_module}:Value"
for _name, _module in _PLAIN.items():
    TRANSFORMS[f"{_KAFKA}.{_name}"] = f"smt.transforms.{_module}:{_name}"
for _name, _target in _ICEBERG.items():
    TRANSFORMS[f"org.apache.iceberg.connect.transforms.{_name}"] = _target
    TRANSFORMS[f"io.tabular.iceberg.connect.transforms.{_name}"] = _target

#: Java class name of each predicate -> ``module:Class``.
PREDICATES: dict[str, str] = {
    f"{_KAFKA}.predicates.HasHeaderKey": "smt.predicates.has_header_key:HasHeaderKey",
    f"{_KAFKA}.predicates.RecordIsTombstone": "smt.predicates.record_is_tombstone:RecordIsTombstone",
    f"{_KAFKA}.predicates.TopicNameMatches": "smt.predicates.topic_name_matches:TopicNameMatches",
}


def _same_target_aliases(registry: Mapping[str, str]) -> dict[str, str]:
    """Simple names shared only by names of one implementation (the Iceberg/Tabular pairs).

    ``compute_aliases`` drops every shared simple name; a name whose classes all
    resolve to the same Python class is not ambiguous, so it is kept here.
    """
    targets: dict[str, set[str]] = {}
    for java_name, target in registry.items():
        targets.setdefault(java_name.rsplit(".", 1)[-1], set()).add(target)
    return {alias: next(iter(t)) for alias, t in targets.items()
            if len(t) == 1 and "$" not in alias and alias not in registry}


def _resolve(class_name: str, registry: Mapping[str, str], kind: str, config_key: str | None) -> type:
    name = (class_name or "").strip() if isinstance(class_name, str) else class_name
    if isinstance(name, str) and "$" in name and ":" not in name and name not in registry:
        # Connect's aliases are simple class names; a nested class's simple name is Key/Value.
        raise ConfigException(config_key or kind, class_name,
                              f"Class {name} could not be found.{did_you_mean(name, registry)}")
    merged = dict(registry)
    merged.update(_same_target_aliases(registry))
    return resolve_class(name, merged, kind=kind, config_key=config_key)


def _ensure_concrete(cls: type, base_method: str, interface: str, class_name: str) -> None:
    if not isinstance(cls, type) or not callable(getattr(cls, base_method, None)):
        raise ConfigException(f"Class {class_name} does not implement the {interface} interface")
    if inspect.isabstract(cls):
        module = inspect.getmodule(cls)
        concrete = [
            f"{member.__module__}:{member.__qualname__}"
            for member in vars(module).values()
            if isinstance(member, type) and member is not cls and issubclass(member, cls)
            and not inspect.isabstract(member)
        ] if module is not None else []
        message = "This class is abstract and cannot be created."
        if concrete:
            message += " Did you mean " + ", ".join(concrete) + "?"
        raise ConfigException(message)


def transformation_class(class_name: str, config_key: str | None = None) -> type:
    """The Python class of a transformation name (Java FQCN, alias or ``module:Class``)."""
    cls = _resolve(class_name, TRANSFORMS, "transformation", config_key)
    _ensure_concrete(cls, "apply", "Transformation", str(class_name).strip())
    return cls


def predicate_class(class_name: str, config_key: str | None = None) -> type:
    """The Python class of a predicate name (Java FQCN, alias or ``module:Class``)."""
    cls = _resolve(class_name, PREDICATES, "predicate", config_key)
    _ensure_concrete(cls, "test", "Predicate", str(class_name).strip())
    return cls


def load(class_name: str, config: Mapping[str, Any] | None = None):
    """A configured transformation: ``load("org.apache.kafka.connect.transforms.Cast$Value", {"spec": "int32"})``."""
    transformation = transformation_class(class_name)()
    transformation.configure(dict(config or {}))
    return transformation


def load_predicate(class_name: str, config: Mapping[str, Any] | None = None):
    """A configured predicate: ``load_predicate("RecordIsTombstone", {})``."""
    predicate = predicate_class(class_name)()
    predicate.configure(dict(config or {}))
    return predicate


__all__ = ["TRANSFORMS", "PREDICATES", "load", "load_predicate", "transformation_class", "predicate_class"]
