"""Resolve Connect plugin class names (converters, SMTs, predicates) to Python classes.

A plugin is named the way a Connect config names it: a fully qualified Java
class name known to a registry (``org.apache.kafka.connect.json.JsonConverter``),
one of its aliases (the simple name, or the simple name without its type
suffix, as Connect's ``PluginUtils.computeAliases`` allows when unambiguous), or
``module:Class`` for a user's own Python plugin.
"""

from __future__ import annotations

import importlib
from typing import Mapping

from connector.api.errors import ConfigException
from connector.api.suggest import did_you_mean


def import_object(path: str) -> type:
    """Import ``module:Attribute`` (``module.sub:Class.Inner`` also works)."""
    module_name, _, attribute = path.partition(":")
    try:
        obj: object = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigException(f"Cannot import module '{module_name}' for plugin '{path}': {exc}") from exc
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise ConfigException(f"Module '{module_name}' has no attribute '{attribute}' (plugin '{path}')") from exc
    return obj  # type: ignore[return-value]


def compute_aliases(registry: Mapping[str, str], suffixes: tuple[str, ...]) -> dict[str, str]:
    """Connect-style aliases: the simple class name, and it without a type suffix.

    An alias shared by two classes is ambiguous and dropped, as in Connect
    (this is why ``InsertField$Value`` needs its full name).
    """
    candidates: dict[str, set[str]] = {}
    for class_name in registry:
        simple = class_name.rsplit(".", 1)[-1]
        names = {simple}
        for suffix in suffixes:
            if simple.endswith(suffix) and simple != suffix:
                names.add(simple[: -len(suffix)])
        for name in names:
            candidates.setdefault(name, set()).add(class_name)
    return {alias: next(iter(targets)) for alias, targets in candidates.items() if len(targets) == 1}


def resolve_class(
    class_name: str,
    registry: Mapping[str, str],
    *,
    kind: str,
    suffixes: tuple[str, ...] = (),
    config_key: str | None = None,
) -> type:
    """The Python class for ``class_name``.

    ``registry`` maps Java class names to ``module:Class`` paths of their Python
    implementations. Unknown names raise :class:`ConfigException` naming the
    config key, the value and what would be accepted.
    """
    name = (class_name or "").strip()
    if not name:
        raise ConfigException(config_key or kind, class_name, f"a {kind} class name is required")
    if name in registry:
        return import_object(registry[name])
    aliases = compute_aliases(registry, suffixes)
    if name in aliases:
        return import_object(registry[aliases[name]])
    if ":" in name:
        found = import_object(name)
        if not isinstance(found, type):
            # Only a class is a plugin: calling anything else (a function such as os:abort) to
            # "instantiate" it would run arbitrary code from a config, which may come over REST.
            raise ConfigException(config_key or kind, class_name, f"{name} is not a class")
        return found
    raise ConfigException(
        config_key or kind,
        class_name,
        f"Class {name} could not be found.{did_you_mean(name, [*registry, *aliases])} Use one of the supported "
        f"{kind} classes (see docs/configuration.md) or 'python.module:ClassName' for your own plugin",
    )
