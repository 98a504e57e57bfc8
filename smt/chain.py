"""The ``transforms`` / ``predicates`` chain of a Connect connector config.

Mirrors Kafka's ``ConnectorConfig`` (validation of ``transforms``,
``transforms.<alias>.*``, ``predicates``, ``predicates.<alias>.*``),
``TransformationStage`` (a transformation applied when
``predicate is None or negate XOR predicate.test(record)``) and
``TransformationChain`` (stages in order; a None record stops the chain).

Config errors are :class:`ConfigException`\\ s whose text names the full key
(``transforms.<alias>.<key>``) and its value, the way Connect reports an
SMT's keys once they are embedded in a connector config. Errors a
transformation raises while applying are re-raised as ``DataException`` /
``RetriableException`` / ``ConnectException`` with Kafka's text, the stage
and the record's origin (topic, partition, offset) appended, and the
original exception as ``__cause__``.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from connector.api.config_def import ConfigDef, ConfigType, parse_type
from connector.api.errors import (
    ConfigException,
    ConnectException,
    DataException,
    RetriableException,
)
from connector.api.record import SinkRecord
from smt import predicate_class, transformation_class

TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
PREDICATE_CONFIG = "predicate"
NEGATE_CONFIG = "negate"
TYPE_CONFIG = "type"
# Keys of transforms.<alias>. that belong to the stage, not to the transformation.
_STAGE_KEYS = (TYPE_CONFIG, PREDICATE_CONFIG, NEGATE_CONFIG)


class TransformationStage:
    """One transformation with its optional predicate (``TransformationStage``)."""

    def __init__(self, transformation: Any, predicate: Any = None, negate: bool = False,
                 alias: str | None = None, type_name: str | None = None):
        self.transformation = transformation
        self.predicate = predicate
        self.negate = negate
        self.alias = alias
        self.type_name = type_name or f"{type(transformation).__module__}:{type(transformation).__qualname__}"

    @property
    def transform_class(self) -> type:
        return type(self.transformation)

    @property
    def java_class_name(self) -> str:
        """The transformation's Connect class name (Java FQCN where it implements one), for error reports."""
        from smt import TRANSFORMS

        if "." in self.type_name and ":" not in self.type_name:
            return self.type_name
        target = f"{type(self.transformation).__module__}:{type(self.transformation).__qualname__}"
        return next((java for java, python in TRANSFORMS.items() if python == target), self.type_name)

    def apply(self, record: SinkRecord) -> SinkRecord | None:
        if self.predicate is None or (self.negate ^ bool(self.predicate.test(record))):
            return self.transformation.apply(record)
        return record

    def close(self) -> None:
        for plugin in (self.transformation, self.predicate):
            close = getattr(plugin, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # noqa: BLE001 - closeQuietly
                    pass

    def __repr__(self) -> str:
        return (f"TransformationStage{{alias={self.alias}, predicate={self.predicate!r}, "
                f"transformation={self.type_name}, negate={'true' if self.negate else 'false'}}}")


def _runtime_error(stage: TransformationStage, exc: Exception, record: SinkRecord) -> ConnectException:
    if isinstance(exc, DataException):
        cls: type[ConnectException] = DataException
    elif isinstance(exc, RetriableException):
        cls = RetriableException
    else:
        cls = ConnectException
    text = str(exc) if isinstance(exc, ConnectException) else f"{type(exc).__name__}: {exc}"
    where = record.describe() if isinstance(record, SinkRecord) else repr(record)
    error = cls(f"{text} (in transformation '{stage.alias}' ({stage.type_name}), {where})")
    # One record's failure in Connect's TRANSFORMATION stage (tolerable with errors.tolerance=all).
    error.errant_stage = "TRANSFORMATION"  # type: ignore[attr-defined]
    error.errant_class = stage.java_class_name  # type: ignore[attr-defined]
    error.errant_error = exc  # type: ignore[attr-defined]
    return error


class TransformationChain:
    """The transformations of a connector, applied in order (``TransformationChain``)."""

    def __init__(self, stages: Iterable[TransformationStage] = ()):
        self.stages: list[TransformationStage] = list(stages)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "TransformationChain":
        """Validate a connector config's transforms and predicates and build the configured chain."""
        aliases, _ = validate(config)
        stages = []
        try:
            for alias in aliases:
                stages.append(_build_stage(config, alias))
        except BaseException:
            for stage in stages:
                stage.close()
            raise
        return cls(stages)

    def apply(self, record: SinkRecord) -> SinkRecord | None:
        """Run the record through every stage; None as soon as a stage drops it."""
        current = record
        for stage in self.stages:
            try:
                result = stage.apply(current)
            except Exception as exc:
                raise _runtime_error(stage, exc, current) from exc
            if result is None:
                return None
            current = result
        return current

    def close(self) -> None:
        for stage in self.stages:
            stage.close()

    def __len__(self) -> int:
        return len(self.stages)

    def __iter__(self):
        return iter(self.stages)

    def __repr__(self) -> str:
        return "TransformationChain{" + ", ".join(s.type_name for s in self.stages) + "}"


# --- validation (ConnectorConfig + its enrich()) -----------------------------------------


def _aliases(config: Mapping[str, Any], key: str) -> list[str]:
    aliases = parse_type(key, config.get(key, ""), ConfigType.LIST)
    if aliases is None:
        raise ConfigException(key, "null", "entry must be non null")
    if len(aliases) > len(set(aliases)):
        raise ConfigException(key, aliases, "Duplicate alias provided.")
    for alias in aliases:
        if not isinstance(alias, str):
            raise ConfigException(f"Item in {key} property is not of type String")
    return aliases


def _stage_config_def(plugin: Any) -> ConfigDef:
    """The transformation's keys plus the implicit ``predicate`` and ``negate`` (which mask its own)."""
    own = plugin.config() if callable(getattr(plugin, "config", None)) else None
    merged = ConfigDef()
    merged.define(PREDICATE_CONFIG, ConfigType.STRING, None, importance="medium",
                  doc="The alias of a predicate used to determine whether to apply this transformation.")
    merged.define(NEGATE_CONFIG, ConfigType.BOOLEAN, False, importance="medium",
                  doc="Whether the configured predicate should be negated.")
    if isinstance(own, ConfigDef):
        for key in own.config_keys.values():
            if key.name not in (PREDICATE_CONFIG, NEGATE_CONFIG):
                merged._add(key)
    return merged


def _plugin(config: Mapping[str, Any], prefix: str, kind: str) -> tuple[Any, str]:
    type_key = prefix + TYPE_CONFIG
    type_name = parse_type(type_key, config.get(type_key), ConfigType.STRING)
    if type_name is None:
        raise ConfigException(type_key, None, f"Not a {kind}")
    resolve = transformation_class if kind == "Transformation" else predicate_class
    cls = resolve(type_name, config_key=type_key)
    try:
        return cls(), type_name
    except Exception as exc:  # noqa: BLE001 - a user plugin constructor may raise anything; reported as Kafka does
        raise ConfigException(type_key, type_name,
                              f"Error getting config definition from {kind}: {exc}") from exc


def _check_keys(config_def: ConfigDef, prefix: str, config: Mapping[str, Any]) -> None:
    """Parse a plugin's keys under ``prefix``; a message without the key gets it added."""
    try:
        config_def.prefixed(prefix).parse(config)
    except ConfigException as exc:
        key = getattr(exc, "config_key", None)
        if exc.name is None and key is not None:
            raise ConfigException(key, getattr(exc, "config_value", None), str(exc)) from exc
        raise


def validate(config: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Check the transforms and predicates of a connector config, as creating a connector does.

    Returns the transform and predicate aliases. Like Kafka's
    ``ConnectorConfig``, this checks every declared alias (type, the plugin's
    own keys under its prefix, ``negate`` without ``predicate``) but not that
    a transform's ``predicate`` names a declared predicate: that is found when
    the chain is built (:meth:`TransformationChain.from_config`).
    """
    transforms = _aliases(config, TRANSFORMS_CONFIG)
    predicates = _aliases(config, PREDICATES_CONFIG)
    for alias in transforms:
        prefix = f"{TRANSFORMS_CONFIG}.{alias}."
        if prefix + NEGATE_CONFIG in config and prefix + PREDICATE_CONFIG not in config:
            raise ConfigException(
                f"Config '{prefix}{NEGATE_CONFIG}' was provided but there is no config "
                f"'{prefix}{PREDICATE_CONFIG}' defining a predicate to be negated."
            )
        plugin, _ = _plugin(config, prefix, "Transformation")
        _check_keys(_stage_config_def(plugin), prefix, config)
    for alias in predicates:
        prefix = f"{PREDICATES_CONFIG}.{alias}."
        plugin, _ = _plugin(config, prefix, "Predicate")
        own = plugin.config() if callable(getattr(plugin, "config", None)) else None
        if isinstance(own, ConfigDef):
            _check_keys(own, prefix, config)
    return transforms, predicates


def _sub_config(config: Mapping[str, Any], prefix: str, drop: Iterable[str]) -> dict[str, Any]:
    drop = set(drop)
    return {
        key[len(prefix):]: value for key, value in config.items()
        if key.startswith(prefix) and key[len(prefix):] not in drop
    }


def _configure(plugin: Any, settings: dict[str, Any], prefix: str, label: str) -> None:
    try:
        plugin.configure(settings)
    except ConfigException as exc:
        key = getattr(exc, "config_key", None) or exc.name
        if key is not None:
            value = getattr(exc, "config_value", None) if getattr(exc, "config_key", None) else exc.value
            reason = exc.reason if exc.reason is not None and exc.name == key else str(exc)
            raise ConfigException(prefix + key, value, f"{reason} ({label})") from exc
        raise ConfigException(f"Invalid configuration for {label}: {exc}") from exc
    except Exception as exc:
        raise ConnectException(f"Failed to configure {label}: {type(exc).__name__}: {exc}") from exc


def _build_stage(config: Mapping[str, Any], alias: str) -> TransformationStage:
    prefix = f"{TRANSFORMS_CONFIG}.{alias}."
    transformation, type_name = _plugin(config, prefix, "Transformation")
    label = f"transformation '{alias}' ({type_name})"
    _configure(transformation, _sub_config(config, prefix, _STAGE_KEYS), prefix, label)
    predicate_alias = parse_type(prefix + PREDICATE_CONFIG, config.get(prefix + PREDICATE_CONFIG),
                                 ConfigType.STRING)
    if predicate_alias is None:
        return TransformationStage(transformation, alias=alias, type_name=type_name)
    declared = _aliases(config, PREDICATES_CONFIG)
    predicate_prefix = f"{PREDICATES_CONFIG}.{predicate_alias}."
    if predicate_alias not in declared:
        raise ConfigException(
            prefix + PREDICATE_CONFIG, predicate_alias,
            f"Unknown configuration '{predicate_prefix}{TYPE_CONFIG}': predicate '{predicate_alias}' "
            f"is not listed in '{PREDICATES_CONFIG}'"
        )
    predicate, predicate_type = _plugin(config, predicate_prefix, "Predicate")
    _configure(predicate, _sub_config(config, predicate_prefix, (TYPE_CONFIG,)), predicate_prefix,
               f"predicate '{predicate_alias}' ({predicate_type})")
    negate_raw = config.get(prefix + NEGATE_CONFIG)
    negate = negate_raw is not None and str(negate_raw).strip().lower() == "true" \
        if not isinstance(negate_raw, bool) else negate_raw
    return TransformationStage(transformation, predicate, negate, alias=alias, type_name=type_name)


__all__ = ["TransformationChain", "TransformationStage", "validate"]
