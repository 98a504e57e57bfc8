"""ReplaceField: keep, drop and rename fields (``ReplaceField$Key`` / ``$Value``).

``exclude`` wins over ``include``; an empty ``include`` keeps everything.
The deprecated ``blacklist`` / ``whitelist`` keys are read as ``exclude`` /
``include`` when the new key is not set.
"""

from __future__ import annotations

from typing import Any, Mapping

from connector.api.config_def import ConfigDef, ConfigType, lambda_validator
from connector.api.errors import ConfigException
from connector.api.java.strings import java_split
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.base import (
    KeySide,
    StructOrMapTransformation,
    ValueSide,
    copy_schema_basics,
    replace_null_with_default,
    require_map,
    require_struct,
)

EXCLUDE = "exclude"
INCLUDE = "include"
RENAMES = "renames"
BLACKLIST = "blacklist"
WHITELIST = "whitelist"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
PURPOSE = "field replacement"
DEPRECATED_KEYS = ((INCLUDE, WHITELIST), (EXCLUDE, BLACKLIST))


def parse_rename_mappings(mappings: list[str]) -> dict[str, str]:
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = java_split(mapping, ":")
        if len(parts) != 2:
            raise ConfigException(RENAMES, mappings, f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


def translate_deprecated(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """``ConfigUtils.translateDeprecatedConfigs``: the new key wins; an old key fills in for it.

    As in Kafka, other keys with null values are dropped (they count as unset).
    """
    config = dict(config or {})
    aliased = {key for group in DEPRECATED_KEYS for key in group}
    translated = {k: v for k, v in config.items() if k not in aliased and v is not None}
    for target, alias in DEPRECATED_KEYS:
        if target in config:
            translated[target] = config[target]
        elif alias in config:
            translated[target] = config[alias]
    return translated


class ReplaceField(StructOrMapTransformation):
    """Filter or rename fields."""

    CONFIG_DEF = replace_null_with_default(
        ConfigDef()
        .define(EXCLUDE, ConfigType.LIST, [], doc="Fields to exclude. This takes precedence over the fields "
                                                  "to include.")
        .define(BLACKLIST, ConfigType.LIST, None, importance="low", doc="Deprecated. Use exclude instead.")
        .define(INCLUDE, ConfigType.LIST, [], doc="Fields to include. If specified, only these fields will be "
                                                  "used.")
        .define(WHITELIST, ConfigType.LIST, None, importance="low", doc="Deprecated. Use include instead.")
        .define(RENAMES, ConfigType.LIST, [], lambda_validator(
            lambda name, value: parse_rename_mappings(value),
            "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"), "medium",
            "Field rename mappings.")
    )

    exclude: frozenset[str] = frozenset()
    include: frozenset[str] = frozenset()
    renames: dict[str, str] = {}
    reverse_renames: dict[str, str] = {}
    replace_null_with_default: bool = True

    def configure(self, config: Mapping[str, Any] | None) -> None:
        self._configure(self.config().parse(translate_deprecated(config)))

    def _configure(self, config: dict[str, Any]) -> None:
        self.exclude = frozenset(config[EXCLUDE])
        self.include = frozenset(config[INCLUDE])
        self.renames = parse_rename_mappings(config[RENAMES])
        self.reverse_renames = {new: old for old, new in self.renames.items()}
        self.replace_null_with_default = config[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schema_cache: LRUCache[Schema, Schema] = LRUCache()

    def keeps(self, field_name: str) -> bool:
        return field_name not in self.exclude and (not self.include or field_name in self.include)

    def renamed(self, field_name: str) -> str:
        return self.renames.get(field_name, field_name)

    def reverse_renamed(self, field_name: str) -> str:
        return self.reverse_renames.get(field_name, field_name)

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        value = require_map(self.operating_value(record), PURPOSE)
        updated = {self.renamed(name): field for name, field in value.items() if self.keeps(name)}
        return self.new_record(record, None, updated)

    def apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        value = require_struct(self.operating_value(record), PURPOSE)
        updated_schema = self.updated_schema(value.schema)
        updated = Struct(updated_schema)
        for field in updated_schema.fields():
            source = self.reverse_renamed(field.name)
            updated.put(field.name, value.get(source) if self.replace_null_with_default
                        else value.get_without_default(source))
        return self.new_record(record, updated_schema, updated)

    def updated_schema(self, schema: Schema) -> Schema:
        return self._schema_cache.get_or_compute(schema, self._build_schema)

    def _build_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields():
            if self.keeps(field.name):
                builder.field(self.renamed(field.name), field.schema)
        return builder.build()


class Key(KeySide, ReplaceField):
    """``org.apache.kafka.connect.transforms.ReplaceField$Key``."""


class Value(ValueSide, ReplaceField):
    """``org.apache.kafka.connect.transforms.ReplaceField$Value``."""
