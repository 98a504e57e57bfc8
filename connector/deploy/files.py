"""The connector configs a deploy wants: read from files and directories, one name per connector.

A PATH is a JSON file, or a directory whose ``*.json`` files are read in sorted order.
Each file is a Connect REST body (``{"name", "config": {...}}``) or a flat config map;
either way the connector's name comes from ``name``. Everything is read before anything
is sent, so a bad file stops the deploy before the worker is touched.
"""

from __future__ import annotations

from pathlib import Path

from connector.api.errors import ConfigException
from connector.config.sink_config import load_connector_file


class DeployInputError(Exception):
    """A PATH or file the deploy cannot use; the message names it."""


def config_files(paths: list[str]) -> list[Path]:
    """The files the PATHs name, directories expanded to their sorted ``*.json`` files."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.is_file())
            if not found:
                raise DeployInputError(f"{raw}: no *.json connector configs in this directory")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise DeployInputError(f"{raw}: no such file or directory")
    return files


def desired_connectors(paths: list[str]) -> dict[str, dict[str, str]]:
    """Connector name → its config (with ``name`` set), in file order; a duplicate name is an error."""
    wanted: dict[str, dict[str, str]] = {}
    origin: dict[str, Path] = {}
    for path in config_files(paths):
        config = _read(path)
        name = config.get("name", "").strip()
        if not name:
            raise DeployInputError(f"{path}: the connector has no name (set \"name\" in the file)")
        if name in wanted:
            raise DeployInputError(f"{path}: connector {name} is already defined in {origin[name]}")
        # Connect stores the name in the config; keeping it here makes an unchanged config compare equal.
        config["name"] = name
        wanted[name] = config
        origin[name] = path
    return wanted


def _read(path: Path) -> dict[str, str]:
    try:
        return load_connector_file(path)
    except ConfigException as exc:
        message = str(exc)
        raise DeployInputError(message if str(path) in message else f"{path}: {message}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DeployInputError(f"{path}: {exc}") from None
