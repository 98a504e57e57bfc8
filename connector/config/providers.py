"""Kafka Connect's config providers: ``${provider:[path:]key}`` placeholders in worker and connector configs.

A worker declares its providers as Connect does::

    config.providers=file,env,dir
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
    config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
    config.providers.env.param.allowlist.pattern=^DB_.*
    config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
    config.providers.dir.param.allowed.paths=/run/secrets

and a config value then says ``${file:/etc/creds.properties:password}`` (a key of a Java properties
file), ``${dir:/run/secrets:db-password}`` (the whole content of a file in a directory) or
``${env:DB_PASSWORD}`` (an environment variable; ``${env::DB_PASSWORD}`` too). The placeholder
syntax and its parsing are those of Kafka's ``ConfigTransformer``; several placeholders may appear
in one value, and a placeholder naming a provider the worker does not declare stays as written (as
in Kafka, so that other ``${...}`` syntaxes pass through).

One deliberate difference: where Kafka silently leaves a placeholder whose file, key or variable is
missing in place (and the connector later fails on a literal ``${...}`` password), icefloe refuses
the config with a :class:`ConfigException` naming the config key, so ``validate`` reports it.

Resolved values are secrets: nothing here logs them, and messages quote only the placeholder.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Callable, ClassVar, Mapping

from connector.api.errors import ConfigException

PROVIDERS_KEY = "config.providers"

FILE_PROVIDER = "org.apache.kafka.common.config.provider.FileConfigProvider"
DIRECTORY_PROVIDER = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
ENV_PROVIDER = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"

# Kafka's ConfigTransformer.DEFAULT_PATTERN: provider, optional path, key; none may contain '}'.
_PLACEHOLDER = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")


class UnresolvedPlaceholder(Exception):
    """A provider could not supply a value; the message says why, without any secret."""


@dataclass(frozen=True)
class AllowedPaths:
    """Kafka 3.9's ``allowed.paths`` (KIP-993): when set, only files under these directories are read."""

    roots: tuple[PurePath, ...] | None

    @staticmethod
    def parse(provider: str, value: str | None) -> "AllowedPaths":
        if value is None or not value.strip():
            return AllowedPaths(None)
        roots = []
        for item in (part.strip() for part in value.split(",")):
            if not os.path.isabs(item):
                raise ConfigException(f"config.providers.{provider}.param.allowed.paths: Path {item} is not absolute")
            roots.append(PurePath(os.path.normpath(item)))
        return AllowedPaths(tuple(roots))

    def check(self, path: str) -> str:
        """The normalised path, or UnresolvedPlaceholder when it is outside every allowed root."""
        if self.roots is None:
            return path
        normalised = PurePath(os.path.normpath(path))
        if not any(normalised == root or root in normalised.parents for root in self.roots):
            raise UnresolvedPlaceholder(f"the path {path} is not allowed to be accessed (allowed.paths)")
        return str(normalised)


def _read_text(path: str) -> str:
    with open(path, "rb") as handle:
        raw = handle.read()
    return raw.decode("utf-8")


@dataclass(frozen=True)
class _PathProvider(ABC):
    """A provider whose placeholders name a path, which ``allowed.paths`` must admit, and a key under it."""

    allowed: AllowedPaths
    kind: ClassVar[str]  # the provider's name in messages
    usage: ClassVar[str]  # how its placeholder is written, for the message when the path is missing

    def get(self, path: str, key: str) -> str:
        if not path:
            raise UnresolvedPlaceholder(f"the {self.kind} provider needs a path: {self.usage}")
        return self.read(self.allowed.check(path), path, key)

    @abstractmethod
    def read(self, checked: str, path: str, key: str) -> str:
        """The value of ``key`` under ``checked`` (``path`` normalised; ``path`` as written, for messages)."""


@dataclass(frozen=True)
class FileConfigProvider(_PathProvider):
    """``${file:/path/to/file.properties:key}``: a key of a Java properties file."""

    kind = "file"
    usage = "${file:/path/to/file.properties:key}"

    def read(self, checked: str, path: str, key: str) -> str:
        from connector.config.java_properties import parse_properties

        try:
            properties = parse_properties(_read_text(checked))
        except OSError as exc:
            raise UnresolvedPlaceholder(f"could not read properties from file {path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise UnresolvedPlaceholder(f"file {path} is not UTF-8 text") from None
        if key not in properties:
            raise UnresolvedPlaceholder(f"file {path} has no key {key}")
        return properties[key]


@dataclass(frozen=True)
class DirectoryConfigProvider(_PathProvider):
    """``${directory:/run/secrets:name}``: the whole content of the file ``name`` in a directory."""

    kind = "directory"
    usage = "${directory:/path/to/dir:file}"

    def read(self, directory: str, path: str, key: str) -> str:
        # Like Kafka, only regular files directly in the directory are values: no sub-paths.
        if "/" in key or key in ("", ".", ".."):
            raise UnresolvedPlaceholder(f"{key} is not a file name in directory {path}")
        target = os.path.join(directory, key)
        if not os.path.isdir(directory):
            raise UnresolvedPlaceholder(f"directory {path} does not exist")
        if not os.path.isfile(target):
            raise UnresolvedPlaceholder(f"directory {path} has no file {key}")
        try:
            return _read_text(target)
        except OSError as exc:
            raise UnresolvedPlaceholder(f"could not read file {key} in directory {path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise UnresolvedPlaceholder(f"file {key} in directory {path} is not UTF-8 text") from None


@dataclass(frozen=True)
class EnvVarConfigProvider:
    """``${env:VAR}`` (or ``${env::VAR}``): an environment variable matching ``allowlist.pattern``."""

    allowlist: re.Pattern[str]
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)

    def get(self, path: str, key: str) -> str:
        if path:
            raise UnresolvedPlaceholder(f"a path is not supported by the env provider, invalid value '{path}'")
        if not self.allowlist.fullmatch(key):
            raise UnresolvedPlaceholder(f"environment variable {key} does not match allowlist.pattern")
        if key not in self.environ:
            raise UnresolvedPlaceholder(f"environment variable {key} is not set")
        return self.environ[key]


Provider = FileConfigProvider | DirectoryConfigProvider | EnvVarConfigProvider


def _file(name: str, params: Mapping[str, str]) -> Provider:
    return FileConfigProvider(AllowedPaths.parse(name, params.get("allowed.paths")))


def _directory(name: str, params: Mapping[str, str]) -> Provider:
    return DirectoryConfigProvider(AllowedPaths.parse(name, params.get("allowed.paths")))


def _env(name: str, params: Mapping[str, str]) -> Provider:
    pattern = params.get("allowlist.pattern", ".*")
    try:
        return EnvVarConfigProvider(re.compile(pattern))
    except re.error as exc:
        raise ConfigException(f"config.providers.{name}.param.allowlist.pattern", pattern, str(exc)) from None


_FACTORIES: dict[str, Callable[[str, Mapping[str, str]], Provider]] = {
    FILE_PROVIDER: _file,
    DIRECTORY_PROVIDER: _directory,
    ENV_PROVIDER: _env,
}
_SIMPLE_NAMES = {cls.rsplit(".", 1)[-1]: cls for cls in _FACTORIES}


class ConfigProviders:
    """The providers a worker declares, resolving ``${provider:[path:]key}`` in config values."""

    def __init__(self, providers: Mapping[str, Provider] | None = None):
        self._providers = dict(providers or {})

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._providers)

    @staticmethod
    def from_worker(worker: Mapping[str, str]) -> "ConfigProviders":
        """Build the providers of ``config.providers`` with their ``.class`` and ``.param.*`` keys."""
        providers: dict[str, Provider] = {}
        for name in (part.strip() for part in worker.get(PROVIDERS_KEY, "").split(",")):
            class_key = f"{PROVIDERS_KEY}.{name}.class"
            if not name or class_key not in worker:
                continue  # as Kafka: a listed name without a class declares nothing
            class_name = worker[class_key].strip()
            factory = _FACTORIES.get(_SIMPLE_NAMES.get(class_name, class_name))
            if factory is None:
                raise ConfigException(
                    class_key, class_name,
                    f"unknown config provider class; icefloe has {', '.join(sorted(_FACTORIES))}")
            prefix = f"{PROVIDERS_KEY}.{name}.param."
            params = {key[len(prefix):]: value for key, value in worker.items() if key.startswith(prefix)}
            providers[name] = factory(name, params)
        return ConfigProviders(providers)

    def resolve(self, config: Mapping[str, str]) -> dict[str, str]:
        """A copy of ``config`` with every known placeholder replaced; ConfigException names the first bad key."""
        resolved: dict[str, str] = {}
        for key, value in config.items():
            resolved[key] = self._resolve_value(key, value)
        return resolved

    def unresolvable(self, config: Mapping[str, str]) -> dict[str, str]:
        """Each key whose placeholders cannot be resolved, with the reason (for config validation)."""
        errors: dict[str, str] = {}
        for key, value in config.items():
            try:
                self._resolve_value(key, value)
            except ConfigException as exc:
                errors[key] = str(exc)
        return errors

    def _resolve_value(self, key: str, value: str) -> str:
        if not isinstance(value, str) or "${" not in value or not self._providers:
            return value

        def substitute(match: re.Match[str]) -> str:
            provider = self._providers.get(match.group(1))
            if provider is None:
                return match.group(0)  # a provider this worker does not declare: kept, as Kafka does
            try:
                return provider.get(match.group(3) or "", match.group(4))
            except UnresolvedPlaceholder as exc:
                raise ConfigException(
                    f"Could not resolve {match.group(0)} in configuration {key}: {exc}") from None

        return _PLACEHOLDER.sub(substitute, value)


def resolve_worker_properties(worker: Mapping[str, str]) -> dict[str, str]:
    """The worker's own properties with their placeholders resolved by the providers they declare.

    The ``config.providers*`` keys themselves are taken literally, as Kafka's AbstractConfig does.
    """
    providers = ConfigProviders.from_worker(worker)
    literal = {key: value for key, value in worker.items() if key.startswith(PROVIDERS_KEY)}
    resolved = providers.resolve({key: value for key, value in worker.items() if key not in literal})
    return {key: literal.get(key, resolved.get(key, "")) for key in worker}
