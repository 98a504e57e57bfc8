"""Keys icefloe accepts from Java sink configs but that cannot change what it does: reported, never dropped silently.

A config written for the Apache or Tabular sink may set keys that tune the
Java coordinator's control-topic protocol or the JVM's Hadoop configuration.
icefloe has neither, so these keys are accepted (the config still runs) but
a non-default value is reported: as a warning when a job starts (``icefloe
run``, the REST worker) and in ``icefloe validate``'s ``warnings``, each
naming the key and saying why it has no effect and what to use instead.
"""

from __future__ import annotations

from typing import Any, Mapping

from connector.api.config_def import ConfigDef, ConfigKey, parse_type
from connector.api.errors import ConfigException

#: key → why setting it changes nothing in icefloe (and what does the job instead).
NO_EFFECT_KEYS: dict[str, str] = {
    "iceberg.control.commit.threads":
        "the Java coordinator commits tables on this many threads; icefloe commits a cycle's tables one after "
        "another",
    "iceberg.coordinator-executor-keep-alive-timeout-ms":
        "it keeps the Java coordinator's commit threads alive; icefloe has no such threads",
    "iceberg.control.group-id-prefix":
        "it names the Java workers' transient control-topic consumer groups; icefloe joins no control-topic "
        "consumer group (a takeover reads the control topic by direct assignment)",
    "iceberg.coordinator.transactional.prefix":
        "it prefixes the Java coordinator's transactional.id; icefloe writes no control-topic transactions",
    "iceberg.hadoop-conf-dir":
        "icefloe's catalogs (pyiceberg) read no Hadoop configuration files; set the catalog's and file system's "
        "settings as iceberg.catalog.* (e.g. iceberg.catalog.uri, iceberg.catalog.s3.*)",
    "tasks.max.enforce":
        "icefloe plans its tasks itself and never reports more than tasks.max Connect tasks",
}
#: key prefix → why keys under it change nothing.
NO_EFFECT_PREFIXES: dict[str, str] = {
    "iceberg.hadoop.":
        "icefloe's catalogs (pyiceberg) have no Hadoop Configuration; set the catalog's and file system's "
        "settings as iceberg.catalog.*",
    "iceberg.kafka.":
        "icefloe's Kafka clients (and a takeover's control-topic reads) take the worker's settings and "
        "consumer.override.*; set these there",
}


def no_effect_warnings(props: Mapping[str, Any], config_def: ConfigDef) -> list[str]:
    """One warning per key of ``props`` set to a value that icefloe cannot honour (see the module doc)."""
    notes = []
    for name, reason in NO_EFFECT_KEYS.items():
        key = config_def.config_keys.get(name)
        if name in props and key is not None and _differs(key, props[name]):
            notes.append(f"{name}={props[name]} has no effect in icefloe: {reason}")
    for keys, reason in no_effect_prefixed(props):
        notes.append(f"{', '.join(keys)} {'has' if len(keys) == 1 else 'have'} no effect in icefloe: {reason}")
    return notes


def no_effect_prefixed(props: Mapping[str, Any]) -> list[tuple[list[str], str]]:
    """Per no-effect prefix that keys of ``props`` have: those keys, sorted, and why they have no effect."""
    found = []
    for prefix, reason in NO_EFFECT_PREFIXES.items():
        keys = sorted(k for k in props if k.startswith(prefix))
        if keys:
            found.append((keys, reason))
    return found


def _differs(key: ConfigKey, value: Any) -> bool:
    """Whether ``value`` differs from the key's default (an unparseable value is reported by validation)."""
    try:
        return parse_type(key.name, value, key.type) != key.default
    except ConfigException:
        return False
