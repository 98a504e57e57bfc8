"""Field paths in SMT configs (``org.apache.kafka.connect.transforms.field``, KIP-821)."""

from __future__ import annotations

import enum
from typing import Any, Mapping

from connector.api.config_def import (
    ConfigDef,
    ConfigType,
    case_insensitive_valid_string,
)
from connector.api.errors import ConfigException
from connector.api.schema import Field, Schema
from connector.api.struct import Struct
from smt.base import require_map_or_null, require_struct_or_null

# ======================================================================================
# Field paths (org.apache.kafka.connect.transforms.field)
# ======================================================================================


class FieldSyntaxVersion(enum.Enum):
    """How field names in SMT configs are read (KIP-821).

    V1: the name is a top-level field, taken literally. V2: dotted paths into
    nested structs/maps, with backtick pairs around names that contain dots.
    """

    V1 = "V1"
    V2 = "V2"

    @classmethod
    def append_config_to(cls, config_def: ConfigDef) -> ConfigDef:
        return config_def.define(
            FIELD_SYNTAX_VERSION_CONFIG, ConfigType.STRING, "V1",
            case_insensitive_valid_string("V1", "V2"), "high",
            "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are "
            "limited to access the elements at the root level of the struct or map. If set to `V2`, the "
            "syntax will support accessing nested elements. To access nested elements, dotted notation is "
            "used. If dots are already included in the field name, then backtick pairs can be used to wrap "
            "field names containing dots. E.g. to access the subfield `baz` from a field named \"foo.bar\" "
            "in a struct/map the following format can be used to access its elements: \"`foo.bar`.baz\".",
        )

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "FieldSyntaxVersion":
        text = config[FIELD_SYNTAX_VERSION_CONFIG]
        try:
            return cls[text.upper()]
        except KeyError:
            raise ConfigException(FIELD_SYNTAX_VERSION_CONFIG, text, "Unrecognized field syntax version") from None


FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"


class SingleFieldPath:
    """A path of field names into a Struct or Map (``SingleFieldPath``)."""

    __slots__ = ("version", "steps")

    def __init__(self, path_text: str, version: FieldSyntaxVersion):
        self.version = version
        if version is FieldSyntaxVersion.V1:
            self.steps: tuple[str, ...] = (path_text,)
        else:
            self.steps = tuple(_parse_path_v2(path_text))

    def path(self) -> list[str]:
        return list(self.steps)

    def field_from(self, schema: Schema | None) -> Field | None:
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            field = current.field(step)
            if field is None:
                return None
            current = field.schema
        return current.field(self.steps[-1])

    def value_from_struct(self, struct: Struct | None, with_default: bool = True) -> Any:
        if struct is None:
            return None
        current = struct
        for step in self.steps[:-1]:
            if current.schema.field(step) is None:
                return None
            nested = require_struct_or_null(current.get(step), "nested field access")
            if nested is None:
                return None
            current = nested
        last = self.steps[-1]
        if current.schema.field(last) is None:
            return None
        return current.get(last) if with_default else current.get_without_default(last)

    def value_from_map(self, value: dict | None) -> Any:
        if value is None:
            return None
        current = value
        for step in self.steps[:-1]:
            nested = require_map_or_null(current.get(step), "nested field access")
            if nested is None:
                return None
            current = nested
        return current.get(self.steps[-1])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleFieldPath) and self.steps == other.steps

    def __hash__(self) -> int:
        return hash(self.steps)

    def __repr__(self) -> str:
        return f"SingleFieldPath{{version={self.version.name}, path={'.'.join(self.steps)}}}"


def _incomplete_backtick(path: str, at: int) -> ConfigException:
    return ConfigException(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick at "
        f"position {at} to escape it"
    )


def _parse_path_v2(path: str) -> list[str]:
    steps: list[str] = []
    idx = 0
    while 0 <= idx < len(path):
        if path[idx] != "`":
            start = idx
            idx = path.find(".", idx)
            if idx >= 0:
                steps.append(path[start:idx])
                idx += 1
            else:
                steps.append(path[start:])
        else:
            backtick_at = idx
            idx += 1
            field = []
            start = idx
            while True:
                idx = path.find("`", idx)
                if idx == -1:
                    raise _incomplete_backtick(path, backtick_at)
                escaped = path[idx - 1] == "\\"
                if idx >= len(path) - 1:
                    if escaped:
                        raise _incomplete_backtick(path, backtick_at)
                    field.append(path[start:idx])
                    steps.append("".join(field))
                    idx += 1
                    break
                if path[idx + 1] != ".":
                    idx += 1
                    continue
                if escaped:
                    field.append(path[start:idx - 1])
                    field.append("`")
                    idx += 1
                    start = idx
                    continue
                field.append(path[start:idx])
                steps.append("".join(field))
                idx += 2
                break
    if path and path[-1] == ".":
        steps.append("")
    return steps
