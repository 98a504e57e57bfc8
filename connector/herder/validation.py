"""Connector config validation in Kafka Connect's ``ConfigInfos`` shape (``AbstractHerder.validateConnectorConfig``).

The declared keys are icefloe's one ConfigDef (framework, Iceberg and icefloe
keys), enriched as Connect enriches ``ConnectorConfig``: each configured
transform and predicate adds its own keys under ``transforms.<alias>.`` /
``predicates.<alias>.`` (group ``Transforms: <alias>``), and each converter the
connector names adds its keys under ``key.converter.`` etc. Every key gets a
``{definition, value}`` entry with Connect's messages; the topic rules are
attached to both topic keys; then, when the declared keys are clean,
``SinkConfig.parse`` runs the checks that no single declaration holds (plugin
instantiation, per-table settings) and its error is attached to the key it names,
or listed with ``definition: null``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from connector.api.config_def import NO_DEFAULT, ConfigDef, ConfigKey, ConfigType, parse_type
from connector.api.errors import ConfigException
from connector.api.java.value_of import java_str
from connector.config.connect_config import CONNECT_CONFIG, ICEBERG_CONNECTOR_CLASSES
from connector.config.iceberg_config import ICEBERG_CONFIG
from connector.config.icefloe_config import ICEFLOE_CONFIG
from connector.config.no_effect import no_effect_warnings
from connector.config.providers import ConfigProviders
from connector.config.sink_config import is_known_key
from connector.herder.errors import BadRequestError, NotFoundError
from connector.herder.plugins import connector_plugins

log = logging.getLogger(__name__)

CONNECTOR_CLASS = "connector.class"
_HIDDEN = "[hidden]"

# Connect's layout of its framework keys (ConnectorConfig + SinkConnectorConfig): the order the
# keys are listed in, and each key's group, order in group, width and display name.
_FRAMEWORK_LAYOUT: dict[str, tuple[str, int, str, str]] = {
    "name": ("Common", 1, "MEDIUM", "Connector name"),
    "connector.class": ("Common", 2, "LONG", "Connector class"),
    "tasks.max": ("Common", 3, "SHORT", "Tasks max"),
    "tasks.max.enforce": ("Common", 4, "SHORT", "Enforce tasks max"),
    "key.converter": ("Common", 5, "SHORT", "Key converter class"),
    "value.converter": ("Common", 6, "SHORT", "Value converter class"),
    "header.converter": ("Common", 7, "SHORT", "Header converter class"),
    "transforms": ("Transforms", 8, "LONG", "Transforms"),
    "predicates": ("Predicates", 9, "LONG", "Predicates"),
    "config.action.reload": ("Common", 10, "MEDIUM", "Reload Action"),
    "errors.retry.timeout": ("Error Handling", 1, "MEDIUM", "Retry Timeout for Errors"),
    "errors.retry.delay.max.ms": ("Error Handling", 2, "MEDIUM", "Maximum Delay Between Retries for Errors"),
    "errors.tolerance": ("Error Handling", 3, "SHORT", "Error Tolerance"),
    "errors.log.enable": ("Error Handling", 4, "SHORT", "Log Errors"),
    "errors.log.include.messages": ("Error Handling", 5, "SHORT", "Log Error Details"),
    "topics": ("Common", 4, "LONG", "Topics"),
    "topics.regex": ("Common", 4, "LONG", "Topics regex"),
    "errors.deadletterqueue.topic.name": ("Error Handling", 6, "MEDIUM", "Dead Letter Queue Topic Name"),
    "errors.deadletterqueue.topic.replication.factor": ("Error Handling", 7, "MEDIUM",
                                                        "Dead Letter Queue Topic Replication Factor"),
    "errors.deadletterqueue.context.headers.enable": ("Error Handling", 8, "MEDIUM",
                                                      "Enable Error Context Headers"),
}

_CONVERTER_ROLES = (("key.converter", "key"), ("value.converter", "value"), ("header.converter", "header"))


@dataclass
class _Entry:
    """One key of the validated config: its declaration (if any) and what validation found."""

    name: str
    key: ConfigKey | None
    layout: tuple[str | None, int, str, str]
    value: Any = None
    shown: str | None = None
    recommended: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def info(self) -> dict:
        definition = None
        if self.key is not None:
            group, order, width, display = self.layout
            definition = {
                "name": self.name, "type": self.key.type.name, "required": self.key.required,
                "default_value": _default_text(self.key), "importance": self.key.importance.upper(),
                "documentation": self.key.doc, "group": group, "width": width, "display_name": display,
                "dependents": [], "order": order,
            }
        value = {"name": self.name, "value": self.shown, "recommended_values": list(self.recommended),
                 "errors": list(self.errors), "visible": True}
        return {"definition": definition, "value": value}


class _Validation:
    """The entries of one validation run, in Connect's order, and the groups in first-seen order."""

    def __init__(self, config: Mapping[str, str], raw: Mapping[str, str]):
        self.config = config
        self.raw = raw
        self.entries: dict[str, _Entry] = {}
        self.groups: list[str] = []

    def declare(self, key: ConfigKey, layout: tuple[str | None, int, str, str],
                values: Mapping[str, Any] | None = None) -> _Entry:
        values = self.config if values is None else values
        entry = _Entry(key.name, key, layout, recommended=_recommended(key))
        self.entries[key.name] = entry
        if layout[0] is not None and layout[0] not in self.groups:
            self.groups.append(layout[0])
        _check_value(entry, key, values)
        if key.name in self.raw and "${" in str(self.raw[key.name]):
            entry.shown = self.raw[key.name]  # never echo what a provider resolved
        elif key.type is ConfigType.PASSWORD and entry.value is not None:
            entry.shown = _HIDDEN
        else:
            entry.shown = _to_text(entry.value, key.type)
        return entry

    def declare_all(self, config_def: ConfigDef, prefix: str = "", group: str | None = None,
                    values: Mapping[str, Any] | None = None, first_order: int = -1) -> None:
        order = first_order
        for key in config_def.config_keys.values():
            layout = (group or key.group, order, "NONE", key.name)
            self.declare(key.with_name(prefix + key.name) if prefix else key, layout,
                         None if values is None else _prefixed_values(values, prefix))
            if first_order >= 0:
                order += 1

    def error(self, name: str | None, message: str) -> None:
        entry = self.entries.get(name or "")
        if entry is None:
            raw = self.raw.get(name) if name else None
            shown = _HIDDEN if raw is not None and _looks_secret(name or "", str(raw)) else raw
            entry = _Entry(name or "", None, (None, -1, "NONE", name or ""), shown=shown)
            self.entries[entry.name] = entry
        if message not in entry.errors:
            entry.errors.append(message)

    def error_count(self) -> int:
        return sum(len(e.errors) for e in self.entries.values())


def validate_connector_config(config: Mapping[str, Any], worker: Mapping[str, str] | None = None,
                              providers: ConfigProviders | None = None) -> dict:
    """Connect's ``ConfigInfos`` for ``config``: every key's definition, value, recommended values and errors."""
    return _validate(config, worker, providers)[0]


def validation_report(config: Mapping[str, Any], worker: Mapping[str, str] | None = None,
                      providers: ConfigProviders | None = None) -> dict:
    """``icefloe validate``'s answer: the ``ConfigInfos``, then what Connect only logs.

    ``connector`` (the name), ``unused`` (keys nothing recognises, as Connect's
    "supplied but isn't a known config") and ``warnings`` (keys icefloe cannot
    honour, settings that combine badly) follow Connect's fields, so the same
    rule answers the REST worker and the command line.
    """
    infos, sink = _validate(config, worker, providers)
    resolved = _resolve_placeholders({str(k): v for k, v in config.items()}, dict(worker or {}), providers)[1]
    if sink is not None:
        unused, warnings = list(sink.unused_keys), list(sink.warnings)
    else:  # the config did not parse: still say what can be said from the keys alone
        unused = sorted(k for k in resolved if not is_known_key(k))
        warnings = no_effect_warnings(resolved, CONNECT_CONFIG.merged(ICEBERG_CONFIG))
    return {**infos, "connector": config.get("name"), "unused": unused, "warnings": warnings}


def _validate(config: Mapping[str, Any], worker: Mapping[str, str] | None,
              providers: ConfigProviders | None) -> tuple[dict, Any]:
    """The ``ConfigInfos`` and, when the config is valid, its parsed ``SinkConfig`` (else None)."""
    worker = dict(worker or {})
    raw = {str(k): v for k, v in config.items()}
    placeholder_errors, resolved = _resolve_placeholders(raw, worker, providers)
    run = _Validation(resolved, raw)
    for name in _framework_order():
        run.declare(CONNECT_CONFIG.config_keys[name], _FRAMEWORK_LAYOUT[name])
    _enrich(run, "transforms", "Transforms", "Transformation")
    _enrich(run, "predicates", "Predicates", "Predicate")
    run.declare_all(ICEBERG_CONFIG)
    run.declare_all(ICEFLOE_CONFIG)
    _converters(run, worker)
    for key, message in placeholder_errors.items():
        run.error(key, message)
    for key, value in raw.items():
        if value is None and key not in run.entries:
            run.error(key, "Null value can not be supplied as the configuration value.")
    _connector_class_rule(run)
    _topic_rules(run)
    sink = _whole_config_checks(run, worker) if run.error_count() == 0 else None
    infos = {"name": raw.get(CONNECTOR_CLASS), "error_count": run.error_count(), "groups": run.groups,
             "configs": [entry.info() for entry in run.entries.values()]}
    return infos, sink


def invalid_config_message(infos: Mapping[str, Any]) -> str | None:
    """Connect's 400 text for an invalid config (``AbstractHerder.maybeAddConfigErrors``), None when valid."""
    count = infos.get("error_count", 0)
    if not count:
        return None
    lines = [f"Connector configuration is invalid and contains the following {count} error(s):"]
    for config in infos.get("configs", []):
        lines.extend((config.get("value") or {}).get("errors", []))
    lines.append("You can also find the above list of errors at the endpoint "
                 "`/connector-plugins/{connectorType}/config/validate`")
    return "\n".join(lines)


def plugin_config_keys(plugin: str) -> list[dict]:
    """``GET /connector-plugins/{plugin}/config``: the plugin's ConfigKeyInfo list.

    For our sink (FQCN or alias): its own keys first, then the framework's sink keys;
    for a converter, transformation or predicate: its own keys.
    """
    if is_iceberg_connector(plugin):
        run = _Validation({}, {})
        run.declare_all(ICEBERG_CONFIG)
        run.declare_all(ICEFLOE_CONFIG)
        for name in _framework_order():
            run.declare(CONNECT_CONFIG.config_keys[name], _FRAMEWORK_LAYOUT[name])
        return [entry.info()["definition"] for entry in run.entries.values()]
    config_def = _plugin_config_def(plugin)
    if config_def is None:
        raise NotFoundError(f"Unknown plugin {plugin}.")
    run = _Validation({}, {})
    run.declare_all(config_def)
    return [entry.info()["definition"] for entry in run.entries.values()]


def require_known_connector(config: Mapping[str, Any]) -> None:
    """Connect looks the connector class up before it validates a config: an unknown class is its
    own error, which lists the connectors the worker has (Connect's 500, a 400 here)."""
    name = config.get(CONNECTOR_CLASS)
    if name and not is_iceberg_connector(name):
        available = ", ".join(_plugin_desc(plugin["class"], plugin["version"]) for plugin in connector_plugins())
        raise BadRequestError(f"Failed to find any class that implements Connector and which name matches {name}, "
                              f"available connectors are: {available}")


def _plugin_desc(class_name: str, version: str) -> str:
    """Connect's ``PluginDesc.toString()`` of a sink connector on the class path."""
    return (f"PluginDesc{{klass=class {class_name}, name='{class_name}', version='{version}', "
            f"encodedVersion={version}, type=sink, typeName='sink', location='classpath'}}")


def is_iceberg_connector(name: str) -> bool:
    """The connector class names and aliases icefloe runs (Connect's ``PluginUtils`` aliases)."""
    return name in ICEBERG_CONNECTOR_CLASSES or name in ("IcebergSinkConnector", "IcebergSink")


# --- declared keys ----------------------------------------------------------------------------


def _framework_order() -> list[str]:
    return [name for name in _FRAMEWORK_LAYOUT if name in CONNECT_CONFIG]


def _check_value(entry: _Entry, key: ConfigKey, values: Mapping[str, Any]) -> None:
    """``ConfigDef.parseForValidate``: parse, default or report missing, then the validator."""
    name = key.name
    if name in values and values[name] is None:
        entry.errors.append("Null value can not be supplied as the configuration value.")
        return
    if name in values:
        try:
            entry.value = parse_type(name, values[name], key.type)
        except ConfigException as exc:
            entry.errors.append(str(exc))
            return
    elif key.default is NO_DEFAULT:
        entry.errors.append(f'Missing required configuration "{name}" which has no default value.')
        return
    else:
        entry.value = key.default
    if key.validator is not None and entry.value is not None:
        try:
            key.validator(name, entry.value)
        except ConfigException as exc:
            entry.errors.append(str(exc))


def _enrich(run: _Validation, list_key: str, group: str, kind: str) -> None:
    """Declare ``<list_key>.<alias>.type`` and the plugin's own keys for each alias (``ConnectorConfig.enrich``)."""
    aliases = run.entries[list_key].value or []
    if len(set(aliases)) != len(aliases):
        run.error(list_key, "Duplicate alias provided.")
    registry = _registry(list_key)
    for alias in dict.fromkeys(aliases):
        prefix = f"{list_key}.{alias}."
        alias_group = f"{group}: {alias}"
        type_key = ConfigKey(prefix + "type", ConfigType.CLASS, importance="high",
                             doc=f"Class for the '{alias}' {kind.lower()}.")
        entry = run.declare(type_key, (alias_group, 0, "LONG", f"{kind} type for {alias}"))
        entry.recommended = sorted(registry)
        plugin_def = ConfigDef()
        if list_key == "transforms":
            plugin_def.define("predicate", ConfigType.STRING, None, importance="medium",
                              doc="The alias of a predicate used to determine whether to apply this transformation.")
            plugin_def.define("negate", ConfigType.BOOLEAN, False, importance="medium",
                              doc="Whether the configured predicate should be negated.")
        if entry.value is not None and not entry.errors:
            try:
                plugin_def = plugin_def.merged(_smt_config_def(list_key, entry.value, type_key.name))
            except ConfigException as exc:
                entry.errors.append(str(exc))
            except Exception as exc:  # noqa: BLE001 - a user's plugin failing to load is a config error
                entry.errors.append(f"Invalid value {entry.value} for configuration {type_key.name}: {exc}")
        run.declare_all(plugin_def, prefix, alias_group, run.config, first_order=1)


def _converters(run: _Validation, worker: Mapping[str, str]) -> None:
    """The keys of each converter the connector names, under its prefix, with ``converter.type`` filled in."""
    for prop, role in _CONVERTER_ROLES:
        entry = run.entries.get(prop)
        class_name = entry.value if entry is not None and not entry.errors else None
        if not class_name:
            continue
        try:
            cls: Any = _converter_class(class_name, prop)
        except ConfigException as exc:
            run.error(prop, str(exc))
            continue
        except Exception as exc:  # noqa: BLE001 - a user's plugin failing to import is a config error
            run.error(prop, f"Invalid value {class_name} for configuration {prop}: {exc}")
            continue
        config_def = getattr(cls, "CONFIG_DEF", None)
        if not isinstance(config_def, ConfigDef):
            continue
        values: dict[str, Any] = {k: v for k, v in run.config.items() if k.startswith(prop + ".")}
        values[f"{prop}.converter.type"] = role
        for key in config_def.config_keys.values():
            run.declare(key.with_name(f"{prop}.{key.name}"), (key.group, -1, "NONE", key.name), values)


def _converter_class(class_name: str, prop: str) -> type:
    import converters
    from connector.api.plugins import resolve_class

    return resolve_class(class_name, converters.CONVERTERS, kind="converter", suffixes=("Converter",),
                         config_key=prop)


def _registry(list_key: str) -> dict[str, str]:
    import smt

    return smt.TRANSFORMS if list_key == "transforms" else smt.PREDICATES


def _smt_config_def(list_key: str, class_name: str, config_key: str) -> ConfigDef:
    import smt

    resolve = smt.transformation_class if list_key == "transforms" else smt.predicate_class
    return _instance_config_def(resolve(class_name, config_key))


def _instance_config_def(cls: Any) -> ConfigDef:
    """An SMT's ``config()`` (or its ``CONFIG_DEF`` when it cannot be built without arguments)."""
    try:
        config_def = cls().config()
    except TypeError:
        config_def = getattr(cls, "CONFIG_DEF", None)
    return config_def if isinstance(config_def, ConfigDef) else ConfigDef()


def _plugin_config_def(plugin: str) -> ConfigDef | None:
    """The ConfigDef of a converter, transformation or predicate by name or alias, None if unknown."""
    import smt

    for resolve in (lambda n: _converter_class(n, "plugin"), smt.transformation_class, smt.predicate_class):
        try:
            cls: Any = resolve(plugin)
        except (ConfigException, ImportError, AttributeError):
            continue
        if hasattr(cls, "apply") or hasattr(cls, "test"):
            return _instance_config_def(cls)
        config_def = getattr(cls, "CONFIG_DEF", None)
        return config_def if isinstance(config_def, ConfigDef) else ConfigDef()
    return None


# --- rules over several keys -----------------------------------------------------------------


def _connector_class_rule(run: _Validation) -> None:
    entry = run.entries[CONNECTOR_CLASS]
    if entry.value is not None and not entry.errors and not is_iceberg_connector(entry.value):
        entry.errors.append(str(ConfigException(
            CONNECTOR_CLASS, entry.value,
            "icefloe runs the Iceberg sink; use org.apache.iceberg.connect.IcebergSinkConnector "
            "(or io.tabular.iceberg.connect.IcebergSinkConnector)")))


def _topic_rules(run: _Validation) -> None:
    """``SinkConnectorConfig.validate``: each topic rule's message on both keys it involves."""
    topics_entry, regex_entry = run.entries["topics"], run.entries["topics.regex"]
    dlq_entry = run.entries["errors.deadletterqueue.topic.name"]
    if topics_entry.errors or regex_entry.errors or dlq_entry.errors:
        return
    topics, regex, dlq = topics_entry.value or [], regex_entry.value or "", dlq_entry.value or ""
    message, keys = None, ("topics", "topics.regex")
    if topics and regex:
        message = "topics and topics.regex are mutually exclusive options, but both are set."
    elif not topics and not regex:
        message = "Must configure one of topics or topics.regex"
    elif dlq and dlq in topics:
        message = (f"The DLQ topic '{dlq}' may not be included in the list of topics "
                   f"('topics=[{', '.join(topics)}]') consumed by the connector")
        keys = ("topics", "errors.deadletterqueue.topic.name")
    elif dlq and regex and _full_match(regex, dlq):
        message = (f"The DLQ topic '{dlq}' may not be matched by the regex for the topics "
                   f"('topics.regex={regex}') consumed by the connector")
        keys = ("topics.regex", "errors.deadletterqueue.topic.name")
    if message is not None:
        for key in keys:
            run.error(key, message)


def _full_match(regex: str, text: str) -> bool:
    try:
        return re.fullmatch(regex, text) is not None
    except re.error:
        return False


def _whole_config_checks(run: _Validation, worker: Mapping[str, str]) -> Any:
    """``SinkConfig.parse`` (plugins built, per-table keys), then the catalog's class: an error on the key it names.

    The parsed ``SinkConfig`` when valid, else None. Nothing is opened or created:
    the catalog is only resolved and its class imported (connector.config.catalog_check).
    """
    from connector.config.catalog_check import check_catalog
    from connector.config.sink_config import SinkConfig

    try:
        sink = SinkConfig.parse(run.config, worker)
        check_catalog(sink.props)
        return sink
    except ConfigException as exc:
        run.error(_key_of(exc, run), str(exc))
    except Exception as exc:  # noqa: BLE001 - bad input must come back as a validation error, not a 500
        log.debug("Connector config check failed", exc_info=True)
        run.error(None, f"{type(exc).__name__}: {exc}")
    return None


def _key_of(exc: ConfigException, run: _Validation) -> str | None:
    """The config key an error is about: the one it names, else the longest submitted key its text quotes."""
    for name in (exc.config_key, exc.name):
        if name and (name in run.entries or name in run.raw or name.startswith("iceberg.catalog.")):
            return name  # a catalog key may be named without being set (iceberg.catalog.uri missing)
    text = str(exc)
    for name in sorted({*run.raw, *run.entries}, key=len, reverse=True):
        if name and name in text:
            return name
    return None


# --- providers -------------------------------------------------------------------------------


def _resolve_placeholders(raw: dict[str, Any], worker: Mapping[str, str],
                          providers: ConfigProviders | None) -> tuple[dict[str, str], dict[str, Any]]:
    """(key -> error for unresolvable placeholders, the config with the others resolved)."""
    if providers is None:
        providers = ConfigProviders.from_worker(dict(worker))
    textual = {k: v for k, v in raw.items() if isinstance(v, str)}
    errors: dict[str, str] = dict(providers.unresolvable(textual))
    resolvable = {k: v for k, v in textual.items() if k not in errors}
    resolved = dict(raw)
    resolved.update(providers.resolve(resolvable))
    return errors, resolved


# --- text forms ------------------------------------------------------------------------------


def _prefixed_values(values: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k: v for k, v in values.items() if k.startswith(prefix)} if prefix else dict(values)


_SECRET_WORDS = ("password", "passwd", "secret", "token", "credential", "jaas", "user.info")


_CREDENTIALS_IN_URL = re.compile(r"://[^/@\s]*:[^/@\s]*@|password=", re.IGNORECASE)


def _looks_secret(key: str, value: str = "") -> bool:
    """An undeclared key (no PASSWORD type to go by) whose value must not be echoed.

    By its name (a catalog credential) or by its value: a URL carrying ``user:password@``
    or a ``password=`` parameter, such as a catalog's database URI.
    """
    return any(word in key.lower() for word in _SECRET_WORDS) or bool(_CREDENTIALS_IN_URL.search(value))


def _recommended(key: ConfigKey) -> list[str]:
    return list(getattr(key.validator, "options", ()) or ())


def _default_text(key: ConfigKey) -> str | None:
    if key.default is NO_DEFAULT:
        return None
    return _to_text(key.default, key.type)


def _to_text(value: Any, config_type: ConfigType) -> str | None:
    """``ConfigDef.convertToString``: lists comma-joined, booleans and numbers as Java prints them."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return ",".join(java_str(v) for v in value)
    if isinstance(value, type):
        return f"{value.__module__}:{value.__qualname__}"
    return java_str(value)
