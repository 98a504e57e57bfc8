"""``/connector-plugins``: the plugins this worker can run, as Connect lists them (``PluginInfo``).

Connect lists sink connectors, then source connectors, transformations,
predicates, converters and header converters, each sorted by class name. A
converter class appears once per role it can play (``converter``,
``header_converter``), decided here by the methods its Python class has.
"""

from __future__ import annotations

import functools
import importlib.metadata
from typing import Any

from connector.config.connect_config import ICEBERG_CONNECTOR_CLASSES


@functools.cache
def version() -> str:
    try:
        return importlib.metadata.version("icefloe")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def connector_plugins() -> list[dict[str, str]]:
    return [_info(name, "sink") for name in sorted(ICEBERG_CONNECTOR_CLASSES)]


@functools.cache
def _other_plugins() -> tuple[tuple[str, str], ...]:
    import converters
    import smt
    from connector.api.plugins import import_object

    found = [(name, "transformation") for name in sorted(smt.TRANSFORMS)]
    found += [(name, "predicate") for name in sorted(smt.PREDICATES)]
    classes: dict[str, Any] = {name: import_object(path) for name, path in converters.CONVERTERS.items()}
    found += [(name, "converter") for name in sorted(classes) if hasattr(classes[name], "to_connect_data")]
    found += [(name, "header_converter") for name in sorted(classes) if hasattr(classes[name], "to_connect_header")]
    return tuple(found)


def all_plugins(connectors_only: bool) -> list[dict[str, str]]:
    """``GET /connector-plugins?connectorsOnly=...``."""
    plugins = connector_plugins()
    if not connectors_only:
        plugins += [_info(name, kind) for name, kind in _other_plugins()]
    return plugins


def _info(class_name: str, kind: str) -> dict[str, str]:
    return {"class": class_name, "type": kind, "version": version()}
