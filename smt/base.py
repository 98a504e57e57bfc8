"""Building blocks shared by the SMTs and predicates.

A Python rendering of what Kafka's ``connect/transforms`` module leans on:

* ``ConfigDef``: config keys declared up front (type, default, validator) and
  parsed once, with Kafka's ``ConfigDef.parseType`` rules and error texts
  (``Missing required configuration "x" which has no default value.``,
  ``Invalid value <v> for configuration <k>: <reason>``);
* ``Transformation`` / ``Predicate`` bases and the ``KeySide`` / ``ValueSide``
  mixins that the ``$Key`` / ``$Value`` variants use to choose a side;
* ``SchemaUtil.copySchemaBasics``, the ``Requirements`` helpers, an LRU cache
  for rebuilt schemas, header schema checks (``ConnectHeaders``);
* ``SingleFieldPath`` (KIP-821 field paths, ``field.syntax.version``);
* Java compatibility for what users write in configs: ``SimpleDateFormat``
  patterns (always UTC) and ``java.util.regex`` patterns and replacements.

Nothing here imports Spark or Arrow.
"""

from __future__ import annotations

import abc
import datetime as _dt
import decimal as _decimal
import enum
import re
import threading
from collections import OrderedDict
from typing import Any, Callable, Iterable, Mapping

from connector.api.errors import ConfigException, DataException
from connector.api.record import Header, SinkRecord
from connector.api.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Field,
    Schema,
    SchemaBuilder,
    Type,
)
from connector.api.struct import Struct

__all__ = [
    "ConfigType", "NO_DEFAULT", "ConfigKey", "ConfigDef", "parse_type", "java_str",
    "non_empty_list", "valid_string", "case_insensitive_valid_string", "non_null",
    "non_empty_string", "valid_regex", "composite", "at_least", "lambda_validator",
    "Transformation", "Predicate", "SidedTransformation", "KeySide", "ValueSide",
    "copy_schema_basics", "LRUCache", "SCHEMA_CACHE_SIZE", "require_schema", "require_map",
    "require_map_or_null", "require_struct", "require_struct_or_null", "require_sink_record",
    "class_name", "schema_text", "checked_header", "replace_null_with_default", "field_value",
    "FieldSyntaxVersion", "SingleFieldPath", "JavaDateFormat", "UnsupportedPatternError", "compile_java_regex",
    "JavaReplacement", "java_split", "java_trim",
]


# ======================================================================================
# Config declaration and parsing (org.apache.kafka.common.config.ConfigDef)
# ======================================================================================


class ConfigType(enum.Enum):
    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    PASSWORD = "PASSWORD"


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()

Validator = Callable[[str, Any], None]


def java_str(value: Any) -> str:
    """``String.valueOf`` of a parsed config value: null, true, [a, b]."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)


class ConfigKey:
    """One declared setting (``ConfigDef.ConfigKey``)."""

    __slots__ = ("name", "type", "default", "validator", "importance", "doc")

    def __init__(self, name: str, type: ConfigType, default: Any = NO_DEFAULT,
                 validator: Validator | None = None, importance: str = "medium", doc: str = ""):
        self.name = name
        self.type = type
        self.default = default
        self.validator = validator
        self.importance = importance
        self.doc = doc

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT

    def with_name(self, name: str) -> "ConfigKey":
        return ConfigKey(name, self.type, self.default, self.validator, self.importance, self.doc)

    def __repr__(self) -> str:
        return f"ConfigKey({self.name!r}, {self.type.name}, default={self.default!r})"


_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_INT_BOUNDS = {ConfigType.SHORT: 2**15, ConfigType.INT: 2**31, ConfigType.LONG: 2**63}
_TYPE_WORDS = {
    ConfigType.INT: "a 32-bit integer",
    ConfigType.SHORT: "a 16-bit integer (short)",
    ConfigType.LONG: "a 64-bit integer (long)",
}


def java_trim(text: str) -> str:
    """``String.trim()``: strips every char <= U+0020 at both ends."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def parse_type(name: str, value: Any, type: ConfigType) -> Any:
    """``ConfigDef.parseType``: a raw value (string or already typed) as ``type``.

    Strings are trimmed; LIST splits on commas (surrounding whitespace dropped,
    ``""`` is the empty list); BOOLEAN accepts true/false in any case. Values
    that arrive as JSON scalars (numbers, booleans) where a STRING is expected
    are taken as their text, as Connect's REST layer does.
    """
    if value is None:
        return None
    trimmed = java_trim(value) if isinstance(value, str) else None
    if type is ConfigType.BOOLEAN:
        if isinstance(value, bool):
            return value
        if trimmed is not None:
            if trimmed.lower() == "true":
                return True
            if trimmed.lower() == "false":
                return False
        raise ConfigException(name, value, "Expected value to be either true or false")
    if type in (ConfigType.STRING, ConfigType.PASSWORD):
        if trimmed is not None:
            return trimmed
        if isinstance(value, (bool, int, float)):
            return java_str(value)
        raise ConfigException(name, value,
                              f"Expected value to be a string, but it was a {class_name(value)}")
    if type in _INT_BOUNDS:
        bound = _INT_BOUNDS[type]
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif trimmed is not None:
            if not _JAVA_INT.fullmatch(trimmed):
                raise ConfigException(name, value, f"Not a number of type {type.name}")
            number = int(trimmed)
        else:
            raise ConfigException(name, value,
                                  f"Expected value to be {_TYPE_WORDS[type]}, but it was a {class_name(value)}")
        if not -bound <= number < bound:
            raise ConfigException(name, value, f"Not a number of type {type.name}")
        return number
    if type is ConfigType.DOUBLE:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if trimmed is not None:
            try:
                return float(trimmed)
            except ValueError:
                raise ConfigException(name, value, f"Not a number of type {type.name}") from None
        raise ConfigException(name, value, f"Expected value to be a double, but it was a {class_name(value)}")
    if type is ConfigType.LIST:
        if isinstance(value, (list, tuple)):
            return list(value)
        if trimmed is not None:
            return [] if trimmed == "" else _COMMA_WITH_WHITESPACE.split(trimmed)
        raise ConfigException(name, value, "Expected a comma separated list.")
    raise AssertionError(f"Unknown type {type}")


class ConfigDef:
    """Declared config keys of a transformation or predicate, parsed in one go."""

    def __init__(self, keys: Iterable[ConfigKey] = ()):
        self._keys: dict[str, ConfigKey] = {}
        for key in keys:
            self._add(key)

    def _add(self, key: ConfigKey) -> None:
        if key.name in self._keys:
            raise ConfigException(f"Configuration {key.name} is defined twice.")
        self._keys[key.name] = key

    def define(self, name: str, type: ConfigType, default: Any = NO_DEFAULT,
               validator: Validator | None = None, importance: str = "medium", doc: str = "") -> "ConfigDef":
        """Declare a key; returns ``self`` so declarations chain, as in Kafka."""
        self._add(ConfigKey(name, type, default, validator, importance, doc))
        return self

    def copy(self) -> "ConfigDef":
        return ConfigDef(self._keys.values())

    @property
    def config_keys(self) -> dict[str, ConfigKey]:
        return dict(self._keys)

    def names(self) -> list[str]:
        return list(self._keys)

    def prefixed(self, prefix: str) -> "ConfigDef":
        """The same keys under ``prefix`` (how Connect embeds an SMT's keys in a connector's)."""
        return ConfigDef(k.with_name(prefix + k.name) for k in self._keys.values())

    def parse_value(self, key: ConfigKey, value: Any, is_set: bool) -> Any:
        if is_set:
            parsed = parse_type(key.name, value, key.type)
        elif key.default is NO_DEFAULT:
            raise ConfigException(f'Missing required configuration "{key.name}" which has no default value.')
        else:
            parsed = key.default
        if key.validator is not None:
            try:
                key.validator(key.name, parsed)
            except ConfigException as exc:
                # Remember which key failed (the text stays Kafka's); the chain uses it
                # to name the key in messages that do not.
                if getattr(exc, "config_key", None) is None:
                    exc.config_key = key.name
                    exc.config_value = parsed
                raise
        return parsed

    def parse(self, props: Mapping[str, Any] | None) -> dict[str, Any]:
        """Every declared key, parsed from ``props`` or defaulted (``ConfigDef.parse``).

        Keys that are not declared are ignored, as ``AbstractConfig`` does.
        """
        props = props or {}
        return {
            name: self.parse_value(key, props.get(name), name in props)
            for name, key in self._keys.items()
        }

    def validate(self, props: Mapping[str, Any] | None) -> dict[str, list[str]]:
        """Error messages per key, without raising (``ConfigDef.validate``)."""
        props = props or {}
        errors: dict[str, list[str]] = {}
        for name, key in self._keys.items():
            try:
                self.parse_value(key, props.get(name), name in props)
                errors[name] = []
            except ConfigException as exc:
                errors[name] = [str(exc)]
        return errors


# --- validators (ConfigDef.Validator implementations) -------------------------------------


class _Validator:
    def __init__(self, check: Callable[[str, Any], None], description: str):
        self._check = check
        self._description = description

    def __call__(self, name: str, value: Any) -> None:
        self._check(name, value)

    def __str__(self) -> str:
        return self._description

    __repr__ = __str__


def lambda_validator(check: Callable[[str, Any], None], description: str) -> Validator:
    return _Validator(check, description)


def _non_empty_list(name: str, value: Any) -> None:
    if value is None or len(value) == 0:
        raise ConfigException(name, value, "Empty list")


non_empty_list: Validator = _Validator(_non_empty_list, "non-empty list")


def _non_null(name: str, value: Any) -> None:
    if value is None:
        raise ConfigException(name, "null", "entry must be non null")


non_null: Validator = _Validator(_non_null, "non-null string")


def _non_empty_string(name: str, value: Any) -> None:
    if value is not None and value == "":
        raise ConfigException(name, value, "String must be non-empty")


non_empty_string: Validator = _Validator(_non_empty_string, "non-empty string")


def valid_string(*options: str) -> Validator:
    def check(name: str, value: Any) -> None:
        if value not in options:
            raise ConfigException(name, value, "String must be one of: " + ", ".join(options))

    return _Validator(check, "[" + ", ".join(options) + "]")


def case_insensitive_valid_string(*options: str) -> Validator:
    upper = {o.upper() for o in options}

    def check(name: str, value: Any) -> None:
        if value is None or value.upper() not in upper:
            raise ConfigException(name, value, "String must be one of (case insensitive): " + ", ".join(options))

    return _Validator(check, "(case insensitive) [" + ", ".join(options) + "]")


def _valid_regex(name: str, value: Any) -> None:
    try:
        compile_java_regex(value)
    except Exception as exc:  # noqa: BLE001 - any failure is an invalid regex, as in Kafka
        raise ConfigException(name, value, f"Invalid regex: {exc}") from None


valid_regex: Validator = _Validator(_valid_regex, "valid regex")


def composite(*validators: Validator) -> Validator:
    def check(name: str, value: Any) -> None:
        for validator in validators:
            validator(name, value)

    return _Validator(check, ", ".join(str(v) for v in validators))


def at_least(minimum: int | float) -> Validator:
    def check(name: str, value: Any) -> None:
        if value is None:
            raise ConfigException(name, None, "Value must be non-null")
        if value < minimum:
            raise ConfigException(name, value, f"Value must be at least {minimum}")

    return _Validator(check, f"[{minimum},...]")


# ======================================================================================
# Transformation and Predicate
# ======================================================================================


class Transformation(abc.ABC):
    """A single message transform (``org.apache.kafka.connect.transforms.Transformation``).

    Subclasses declare ``CONFIG_DEF``; :meth:`configure` parses the config once
    against it and hands the typed values to :meth:`_configure`. ``apply``
    returns the transformed record, or None to drop it.
    """

    CONFIG_DEF: ConfigDef = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, config: Mapping[str, Any] | None) -> None:
        self._configure(self.config().parse(config))

    def _configure(self, config: dict[str, Any]) -> None:
        """Set up from the parsed config (override)."""

    @abc.abstractmethod
    def apply(self, record: SinkRecord) -> SinkRecord | None:
        """Transform one record; None drops it."""

    def close(self) -> None:
        """Release resources (override)."""

    def __repr__(self) -> str:
        return f"{type(self).__module__}:{type(self).__qualname__}"


class Predicate(abc.ABC):
    """A condition on records (``org.apache.kafka.connect.transforms.predicates.Predicate``)."""

    CONFIG_DEF: ConfigDef = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, config: Mapping[str, Any] | None) -> None:
        self._configure(self.config().parse(config))

    def _configure(self, config: dict[str, Any]) -> None:
        """Set up from the parsed config (override)."""

    @abc.abstractmethod
    def test(self, record: SinkRecord) -> bool:
        """Whether the record matches."""

    def close(self) -> None:
        """Release resources (override)."""


class SidedTransformation(Transformation):
    """A transformation with ``$Key`` and ``$Value`` variants.

    The variants only choose the side: they mix :class:`KeySide` or
    :class:`ValueSide` in front of the concrete SMT class.
    """

    @abc.abstractmethod
    def operating_schema(self, record: SinkRecord) -> Schema | None:
        ...

    @abc.abstractmethod
    def operating_value(self, record: SinkRecord) -> Any:
        ...

    @abc.abstractmethod
    def new_record(self, record: SinkRecord, schema: Schema | None, value: Any,
                   headers: Iterable[Header] | None = None) -> SinkRecord:
        ...


class KeySide:
    """Operate on ``key`` / ``key_schema`` (the ``$Key`` variants)."""

    def operating_schema(self, record: SinkRecord) -> Schema | None:
        return record.key_schema

    def operating_value(self, record: SinkRecord) -> Any:
        return record.key

    def new_record(self, record: SinkRecord, schema: Schema | None, value: Any,
                   headers: Iterable[Header] | None = None) -> SinkRecord:
        return record.new_record(record.topic, record.kafka_partition, schema, value,
                                 record.value_schema, record.value, record.timestamp,
                                 None if headers is None else tuple(headers))


class ValueSide:
    """Operate on ``value`` / ``value_schema`` (the ``$Value`` variants)."""

    def operating_schema(self, record: SinkRecord) -> Schema | None:
        return record.value_schema

    def operating_value(self, record: SinkRecord) -> Any:
        return record.value

    def new_record(self, record: SinkRecord, schema: Schema | None, value: Any,
                   headers: Iterable[Header] | None = None) -> SinkRecord:
        return record.new_record(record.topic, record.kafka_partition, record.key_schema, record.key,
                                 schema, value, record.timestamp,
                                 None if headers is None else tuple(headers))


# ======================================================================================
# SchemaUtil, Requirements, caching, headers
# ======================================================================================


def copy_schema_basics(source: Schema, builder: SchemaBuilder | None = None) -> SchemaBuilder:
    """``SchemaUtil.copySchemaBasics``: a builder with the source's name, version, doc, parameters.

    Without a builder, one of the source's type is made (an ARRAY builder keeps
    the element schema; a MAP builder, which Kafka cannot make here, keeps its
    key and value schemas).
    """
    if builder is None:
        if source.type is Type.ARRAY:
            builder = SchemaBuilder.array(source.value_schema)
        elif source.type is Type.MAP:
            builder = SchemaBuilder.map(source.key_schema, source.value_schema)
        else:
            builder = SchemaBuilder(source.type)
    builder.name(source.name)
    builder.version(source.version)
    builder.doc(source.doc)
    if source.parameters is not None:
        builder.parameters(source.parameters)
    return builder


SCHEMA_CACHE_SIZE = 16


class LRUCache:
    """A small thread-safe LRU map (``SynchronizedCache(new LRUCache<>(16))``)."""

    def __init__(self, max_size: int = SCHEMA_CACHE_SIZE):
        self._max_size = max_size
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            try:
                self._data.move_to_end(key)
            except KeyError:
                return None
            return self._data[key]

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._max_size:
                self._data.popitem(last=False)

    def get_or_compute(self, key: Any, compute: Callable[[Any], Any]) -> Any:
        value = self.get(key)
        if value is None:
            value = compute(key)
            self.put(key, value)
        return value

    def __len__(self) -> int:
        return len(self._data)

    # Picklable (a configured chain may be shipped to Spark executors): the entries and the
    # lock are not carried over.
    def __getstate__(self) -> dict:
        return {"max_size": self._max_size}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["max_size"])


def class_name(value: Any) -> str:
    """The class of a value for error messages (``nullSafeClassName``); Python's names."""
    if value is None:
        return "null"
    return type(value).__name__


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataException(f"Schema required for [{purpose}]")
    return schema


def require_map(value: Any, purpose: str) -> dict:
    if not isinstance(value, dict):
        raise DataException(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {class_name(value)}"
        )
    return value


def require_map_or_null(value: Any, purpose: str) -> dict | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataException(f"Only Struct objects supported for [{purpose}], found: {class_name(value)}")
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_sink_record(record: Any, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataException(f"Only SinkRecord supported for [{purpose}], found: {class_name(record)}")
    return record


REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"
REPLACE_NULL_WITH_DEFAULT_DOC = (
    "Whether to replace fields that have a default value and that are null to the default value. "
    "When set to true, the default value is used, otherwise null is used."
)


def replace_null_with_default(config_def: ConfigDef) -> ConfigDef:
    """Declare ``replace.null.with.default`` (BOOLEAN, default true)."""
    return config_def.define(REPLACE_NULL_WITH_DEFAULT, ConfigType.BOOLEAN, True, None, "medium",
                             REPLACE_NULL_WITH_DEFAULT_DOC)


def field_value(struct: Struct, field: Field | str, with_default: bool) -> Any:
    """``Struct.get`` (null replaced by the field default) or ``getWithoutDefault``."""
    return struct.get(field) if with_default else struct.get_without_default(field)


def schema_text(schema: Schema) -> str:
    """``ConnectSchema.toString()``: ``Schema{INT32}``, ``Schema{name:STRUCT}``."""
    return f"Schema{{{schema.name}:{schema.type.name}}}" if schema.name else f"Schema{{{schema.type.name}}}"


_HEADER_CLASSES: dict[Type, tuple[type, ...]] = {
    Type.BYTES: (bytes, bytearray, memoryview),
    Type.STRING: (str,),
    Type.BOOLEAN: (bool,),
    Type.INT8: (int,), Type.INT16: (int,), Type.INT32: (int,), Type.INT64: (int,),
    Type.FLOAT32: (float,), Type.FLOAT64: (float,),
    Type.ARRAY: (list, tuple),
    Type.MAP: (dict,),
    Type.STRUCT: (Struct,),
}
_HEADER_LOGICAL: dict[str, tuple[type, ...]] = {
    DECIMAL_LOGICAL_NAME: (_decimal.Decimal,),
    DATE_LOGICAL_NAME: (_dt.date,),
    TIME_LOGICAL_NAME: (_dt.time,),
    TIMESTAMP_LOGICAL_NAME: (_dt.datetime,),
}


def checked_header(key: str, value: Any, schema: Schema | None) -> Header:
    """A header as ``ConnectHeaders.add(key, value, schema)`` makes it, with its schema check."""
    if schema is not None:
        if value is None:
            if not schema.optional:
                raise DataException(f"A null value requires an optional schema but was {schema_text(schema)}")
        else:
            allowed = _HEADER_CLASSES[schema.type] + _HEADER_LOGICAL.get(schema.name or "", ())
            ok = isinstance(value, allowed)
            if ok and isinstance(value, bool) and schema.type is not Type.BOOLEAN:
                ok = False
            if not ok:
                raise DataException(
                    f"The value {value} is not compatible with the schema {schema_text(schema)}"
                )
    return Header(key, value, schema)


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
            current = require_struct_or_null(current.get(step), "nested field access")
            if current is None:
                return None
        last = self.steps[-1]
        if current.schema.field(last) is None:
            return None
        return current.get(last) if with_default else current.get_without_default(last)

    def value_from_map(self, value: dict | None) -> Any:
        if value is None:
            return None
        current = value
        for step in self.steps[:-1]:
            current = require_map_or_null(current.get(step), "nested field access")
            if current is None:
                return None
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


# ======================================================================================
# java.text.SimpleDateFormat, in UTC
# ======================================================================================

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_PATTERN_LETTERS = set("GyYMLwWDdFEuaHkKhmsSzZX")
_UNSUPPORTED_LETTERS = set("YwW")  # week-based fields need locale week rules
_NUMERIC_TEXT_LETTERS = set("ML")  # numeric when fewer than 3 letters
_ALWAYS_NUMERIC = set("yDdFuHkKhmsS")
# Fixed offsets (minutes) of the zone names accepted when parsing z/Z.
_ZONE_NAMES = {
    "UTC": 0, "GMT": 0, "UT": 0, "Z": 0,
    "COORDINATED UNIVERSAL TIME": 0, "GREENWICH MEAN TIME": 0,
    "EST": -300, "EDT": -240, "CST": -360, "CDT": -300, "MST": -420, "MDT": -360,
    "PST": -480, "PDT": -420,
}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class UnsupportedPatternError(ValueError):
    """A valid ``SimpleDateFormat`` pattern that this implementation does not support."""


class JavaDateFormat:
    """A ``SimpleDateFormat`` with the UTC time zone and an English locale.

    Supports the pattern letters G y M L d D F E u a H k K h m s S z Z X, quoted
    literals (``'T'``, ``''``) and lenient parsing (out-of-range fields roll
    over; text after the last field is ignored), as ``SimpleDateFormat`` does.
    Letters Java rejects raise ``ValueError``; the week-based letters Y, w and W,
    which Java supports but this class does not, raise
    :class:`UnsupportedPatternError`.
    """

    def __init__(self, pattern: str):
        self.pattern = pattern
        self._tokens = self._compile(pattern)

    def to_pattern(self) -> str:
        return self.pattern

    @staticmethod
    def _compile(pattern: str) -> list[tuple[str, Any]]:
        tokens: list[tuple[str, Any]] = []
        i, n = 0, len(pattern)
        literal: list[str] = []

        def flush() -> None:
            if literal:
                tokens.append(("lit", "".join(literal)))
                literal.clear()

        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    literal.append("'")
                    i += 2
                    continue
                j = i + 1
                while True:
                    if j >= n:
                        raise ValueError("Unterminated quote")
                    if pattern[j] == "'":
                        if j + 1 < n and pattern[j + 1] == "'":
                            literal.append("'")
                            j += 2
                            continue
                        break
                    literal.append(pattern[j])
                    j += 1
                i = j + 1
            elif ("a" <= c <= "z") or ("A" <= c <= "Z"):
                if c not in _PATTERN_LETTERS:
                    raise ValueError(f"Illegal pattern character '{c}'")
                if c in _UNSUPPORTED_LETTERS:
                    raise UnsupportedPatternError(
                        f"Unsupported pattern character '{c}' (week-based fields are not supported)")
                j = i
                while j < n and pattern[j] == c:
                    j += 1
                count = j - i
                if c == "X" and count > 3:
                    raise ValueError(f"invalid ISO 8601 format: length={count}")
                flush()
                tokens.append((c, count))
                i = j
            else:
                literal.append(c)
                i += 1
        flush()
        return tokens

    # --- formatting -------------------------------------------------------------------

    def format_millis(self, millis: int) -> str:
        try:
            moment = _EPOCH + _dt.timedelta(milliseconds=millis)
        except OverflowError:
            raise DataException(f"Timestamp {millis} is out of the supported range (years 1-9999)") from None
        return self.format(moment)

    def format(self, moment: _dt.datetime) -> str:
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=_dt.timezone.utc)
        moment = moment.astimezone(_dt.timezone.utc)
        out: list[str] = []
        for kind, arg in self._tokens:
            if kind == "lit":
                out.append(arg)
            else:
                out.append(self._format_field(kind, arg, moment))
        return "".join(out)

    @staticmethod
    def _format_field(letter: str, count: int, t: _dt.datetime) -> str:
        def num(v: int) -> str:
            return str(v).zfill(count)

        if letter == "G":
            return "AD"
        if letter == "y":
            return str(t.year % 100).zfill(2) if count == 2 else num(t.year)
        if letter in "ML":
            if count >= 4:
                return _MONTHS[t.month - 1]
            if count == 3:
                return _MONTHS[t.month - 1][:3]
            return num(t.month)
        if letter == "d":
            return num(t.day)
        if letter == "D":
            return num(t.timetuple().tm_yday)
        if letter == "F":
            return num((t.day - 1) // 7 + 1)
        if letter == "E":
            name = _DAYS[t.weekday()]
            return name if count >= 4 else name[:3]
        if letter == "u":
            return num(t.isoweekday())
        if letter == "a":
            return "AM" if t.hour < 12 else "PM"
        if letter == "H":
            return num(t.hour)
        if letter == "k":
            return num(t.hour or 24)
        if letter == "K":
            return num(t.hour % 12)
        if letter == "h":
            return num(t.hour % 12 or 12)
        if letter == "m":
            return num(t.minute)
        if letter == "s":
            return num(t.second)
        if letter == "S":
            return num(t.microsecond // 1000)
        if letter == "z":
            return "Coordinated Universal Time" if count >= 4 else "UTC"
        if letter == "Z":
            return "+0000"
        if letter == "X":
            return "Z"
        raise AssertionError(letter)

    # --- parsing ----------------------------------------------------------------------

    def parse_millis(self, text: str) -> int:
        """Epoch milliseconds of ``text``; ``ValueError`` when it does not match."""
        fields: dict[str, int] = {}
        offset_minutes = 0
        pos = 0
        tokens = self._tokens
        n = len(text)
        for index, (kind, arg) in enumerate(tokens):
            if kind == "lit":
                if not text.startswith(arg, pos):
                    raise ValueError(f"Unparseable date: \"{text}\"")
                pos += len(arg)
                continue
            letter, count = kind, arg
            numeric = letter in _ALWAYS_NUMERIC or (letter in _NUMERIC_TEXT_LETTERS and count <= 2)
            if numeric:
                while pos < n and text[pos] in " \t":
                    pos += 1
                obey_count = False
                if index + 1 < len(tokens):
                    nk, nc = tokens[index + 1]
                    if nk != "lit" and (nk in _ALWAYS_NUMERIC or (nk in _NUMERIC_TEXT_LETTERS and nc <= 2)):
                        obey_count = True
                end = min(n, pos + count) if obey_count else n
                m = re.compile(r"-?[0-9]+").match(text, pos, end)
                if not m:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                digits = m.group(0)
                value = int(digits)
                if letter == "y" and count <= 2 and len(digits) == 2 and digits.isdigit():
                    value = _two_digit_year(value)
                fields[letter if letter != "L" else "M"] = value
                pos = m.end()
            elif letter in "ML":
                value = _match_text(text, pos, [(name, i + 1) for i, name in enumerate(_MONTHS)]
                                    + [(name[:3], i + 1) for i, name in enumerate(_MONTHS)])
                if value is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                fields["M"], pos = value
            elif letter == "E":
                value = _match_text(text, pos, [(d, i) for i, d in enumerate(_DAYS)]
                                    + [(d[:3], i) for i, d in enumerate(_DAYS)])
                if value is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                pos = value[1]
            elif letter == "a":
                value = _match_text(text, pos, [("AM", 0), ("PM", 1)])
                if value is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                fields["a"], pos = value
            elif letter == "G":
                value = _match_text(text, pos, [("AD", 1), ("BC", 0)])
                if value is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                pos = value[1]
            else:  # z, Z, X
                parsed = _parse_zone(text, pos, letter)
                if parsed is None:
                    raise ValueError(f"Unparseable date: \"{text}\"")
                offset_minutes, pos = parsed
        if pos == 0 and tokens:
            raise ValueError(f"Unparseable date: \"{text}\"")
        return _resolve_lenient(fields) - offset_minutes * 60_000


def _two_digit_year(value: int) -> int:
    # SimpleDateFormat resolves "yy" into the century starting 80 years before now.
    start = _dt.datetime.now(_dt.timezone.utc).year - 80
    year = (start // 100) * 100 + value
    if year < start:
        year += 100
    return year


def _match_text(text: str, pos: int, candidates: list[tuple[str, int]]) -> tuple[int, int] | None:
    best: tuple[int, int] | None = None
    best_len = 0
    folded = text[pos:].lower()
    for name, value in candidates:
        if folded.startswith(name.lower()) and len(name) > best_len:
            best, best_len = (value, pos + len(name)), len(name)
    return best


_OFFSET = re.compile(r"([+-])([0-9]{1,2})(?::?([0-9]{2}))?")


def _parse_zone(text: str, pos: int, letter: str) -> tuple[int, int] | None:
    if letter == "X":
        if text.startswith(("Z", "z"), pos):
            return 0, pos + 1
        m = _OFFSET.match(text, pos)
        if not m:
            return None
        minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
        return (-minutes if m.group(1) == "-" else minutes), m.end()
    m = _OFFSET.match(text, pos)
    if m:
        minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
        return (-minutes if m.group(1) == "-" else minutes), m.end()
    upper = text[pos:].upper()
    if upper.startswith("GMT") and len(upper) > 3 and upper[3] in "+-":
        m = _OFFSET.match(text, pos + 3)
        if m:
            minutes = int(m.group(2)) * 60 + int(m.group(3) or 0)
            return (-minutes if m.group(1) == "-" else minutes), m.end()
    for name in sorted(_ZONE_NAMES, key=len, reverse=True):
        if name == "Z":
            continue
        if upper.startswith(name):
            return _ZONE_NAMES[name], pos + len(name)
    return None


def _resolve_lenient(fields: dict[str, int]) -> int:
    """Epoch millis (UTC) from parsed fields, rolling over out-of-range values like Calendar."""
    year = fields.get("y", 1970)
    if "D" in fields and "M" not in fields and "d" not in fields:
        days = (_dt.date(year, 1, 1) - _dt.date(1970, 1, 1)).days + fields["D"] - 1
    else:
        month = fields.get("M", 1) - 1
        year += month // 12
        month %= 12
        if not 1 <= year <= 9999:
            raise ValueError(f"Year {year} out of range")
        days = (_dt.date(year, month + 1, 1) - _dt.date(1970, 1, 1)).days + fields.get("d", 1) - 1
    if "H" in fields:
        hour = fields["H"]
    elif "k" in fields:
        hour = 0 if fields["k"] == 24 else fields["k"]
    elif "h" in fields or "K" in fields:
        base = fields["h"] % 12 if "h" in fields else fields["K"]
        hour = base + 12 * fields.get("a", 0)
    else:
        hour = 12 * fields.get("a", 0) if "a" in fields else 0
    millis = (((days * 24 + hour) * 60 + fields.get("m", 0)) * 60 + fields.get("s", 0)) * 1000
    return millis + fields.get("S", 0)


# ======================================================================================
# java.util.regex patterns and replacements
# ======================================================================================

_POSIX_CLASSES = {
    "Lower": "a-z", "Upper": "A-Z", "ASCII": "\\x00-\\x7f", "Alpha": "a-zA-Z", "Digit": "0-9",
    "Alnum": "a-zA-Z0-9", "Punct": "!-/:-@\\[-`{-~", "Graph": "!-~", "Print": " -~",
    "Blank": " \\t", "Cntrl": "\\x00-\\x1f\\x7f", "XDigit": "0-9a-fA-F", "Space": " \\t\\n\\x0b\\f\\r",
    "javaLowerCase": "a-z", "javaUpperCase": "A-Z", "javaWhitespace": " \\t\\n\\x0b\\f\\r\\x1c-\\x1f",
    "L": "a-zA-Z", "IsL": "a-zA-Z", "IsLetter": "a-zA-Z", "IsAlphabetic": "a-zA-Z",
    "Lu": "A-Z", "IsLu": "A-Z", "IsUppercase": "A-Z", "Ll": "a-z", "IsLl": "a-z", "IsLowercase": "a-z",
    "N": "0-9", "Nd": "0-9", "IsDigit": "0-9", "IsWhite_Space": " \\t\\n\\x0b\\f\\r",
    "IsPunctuation": "!-/:-@\\[-`{-~", "InBasicLatin": "\\x00-\\x7f",
}
_JAVA_FLAGS = {"i": "i", "m": "m", "s": "s", "x": "x", "u": "", "U": "", "d": ""}
_QUANTIFIER = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")


class JavaRegexError(ValueError):
    """A pattern ``java.util.regex.Pattern`` would reject, or one that cannot be translated."""


def _translate_java_regex(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = 0
    # For each open group: how many extra ')' to emit when it closes (scoped inline flags).
    group_stack: list[int] = []
    top_level_closers = 0
    # What the previous step emitted: "atom" (something a quantifier can follow) or "open"
    # (pattern start, a group opening, '|'), after which Java reads '{' literally.
    last_kind = "open"

    def error(message: str) -> JavaRegexError:
        return JavaRegexError(f"{message} near index {i}\n{pattern}")

    while i < n:
        c = pattern[i]
        can_repeat = last_kind == "atom"
        last_kind = "atom"
        if c == "\\":
            if i + 1 >= n:
                raise error("Unexpected internal error")
            d = pattern[i + 1]
            if d == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2:] if end < 0 else pattern[i + 2:end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
                continue
            if d in "pP":
                m = re.compile(r"\{(\^?)([A-Za-z_]+)\}|([A-Za-z])").match(pattern, i + 2)
                if not m:
                    raise error("Illegal/unsupported character property")
                negate_inner = bool(m.group(1))
                name = m.group(2) or m.group(3)
                name = name[2:] if name.startswith("Is") and name[2:] in _POSIX_CLASSES and name not in _POSIX_CLASSES else name
                if name not in _POSIX_CLASSES:
                    raise error(f"Unknown character property name {{{name}}}")
                ranges = _POSIX_CLASSES[name]
                negate = (d == "P") != negate_inner
                if in_class:
                    if negate:
                        raise error("Negated character properties inside a class are not supported")
                    out.append(ranges)
                else:
                    out.append(("[^" if negate else "[") + ranges + "]")
                i = m.end()
                continue
            if d == "k":
                m = re.compile(r"<([A-Za-z][A-Za-z0-9]*)>").match(pattern, i + 2)
                if not m:
                    raise error("\\k is not followed by '<' for named capturing group")
                out.append(f"(?P={m.group(1)})")
                i = m.end()
                continue
            if d == "z":
                out.append("\\Z")
            elif d == "Z":
                out.append("(?=[\\n\\r\\x85\\u2028\\u2029]?\\Z)")
            elif d == "h":
                out.append("[ \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000]")
            elif d == "H":
                out.append("[^ \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000]")
            elif d == "v":
                out.append("[\\n\\x0b\\f\\r\\x85\\u2028\\u2029]")
            elif d == "V":
                out.append("[^\\n\\x0b\\f\\r\\x85\\u2028\\u2029]")
            elif d == "R":
                out.append("(?:\\r\\n|[\\n\\x0b\\f\\r\\x85\\u2028\\u2029])")
            elif d == "e":
                out.append("\\x1b")
            elif d == "c":
                if i + 2 >= n:
                    raise error("Illegal control escape sequence")
                out.append("\\x%02x" % (ord(pattern[i + 2]) ^ 64))
                i += 3
                continue
            elif d == "x" and i + 2 < n and pattern[i + 2] == "{":
                end = pattern.find("}", i + 3)
                if end < 0:
                    raise error("Unclosed hexadecimal escape sequence")
                out.append(re.escape(chr(int(pattern[i + 3:end], 16))))
                i = end + 1
                continue
            elif d == "0":
                m = re.compile(r"[0-3]?[0-7]{1,2}").match(pattern, i + 2)
                if not m:
                    raise error("Illegal octal escape sequence")
                out.append("\\x%02x" % int(m.group(0), 8))
                i = m.end()
                continue
            elif d in "GX":
                raise error(f"Escape sequence \\{d} is not supported")
            elif d.isalpha() and d not in "tnrfaswdSWDbBAuxE":
                raise error("Illegal/unsupported escape sequence")
            else:
                out.append(c + d)
            i += 2
            continue
        if in_class:
            if c == "[":
                raise error("Nested character classes are not supported")
            if c == "&" and pattern.startswith("&&", i):
                raise error("Character class intersections are not supported")
            if c == "]":
                in_class -= 1
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = 1
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                # Java, like Python, takes a ']' right after '[' (or '[^') literally.
                out.append("\\]")
                i += 1
            continue
        if c == "(":
            if pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3] not in "=!":
                m = re.compile(r"\(\?<([A-Za-z][A-Za-z0-9]*)>").match(pattern, i)
                if not m:
                    raise error("capturing group name does not start with a Latin letter")
                out.append(f"(?P<{m.group(1)}>")
                last_kind = "open"
                group_stack.append(0)
                i = m.end()
                continue
            if pattern.startswith("(?P", i):
                raise error("Unknown inline modifier")
            m = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])").match(pattern, i)
            if m and (m.group(1) or m.group(2) is not None):
                on, off, end = m.group(1), m.group(2) or "", m.group(3)
                for flag in on + off:
                    if flag not in _JAVA_FLAGS:
                        raise error("Unknown inline modifier")
                py_on = "".join(_JAVA_FLAGS[f] for f in on)
                py_off = "".join(_JAVA_FLAGS[f] for f in off)
                spec = py_on + (("-" + py_off) if py_off else "")
                if end == ":":
                    out.append(f"(?{spec}:" if spec else "(?:")
                    group_stack.append(0)
                elif spec and not out and not group_stack and not py_off:
                    out.append(f"(?{spec})")  # flags for the whole pattern
                elif spec:
                    # Java lets inline flags switch on mid-pattern until the enclosing group
                    # ends; Python wants them scoped: open a group closed with the enclosing one.
                    out.append(f"(?{spec}:")
                    if group_stack:
                        group_stack[-1] += 1
                    else:
                        top_level_closers += 1
                last_kind = "open"
                i = m.end()
                continue
            last_kind = "open"
            group_stack.append(0)
            out.append(c)
            i += 1
            continue
        if c == ")":
            if not group_stack:
                raise error("Unmatched closing ')'")
            out.append(")" * group_stack.pop())
            out.append(")")
            i += 1
            continue
        if c == "{":
            m = _QUANTIFIER.match(pattern, i)
            if not m:
                raise error("Illegal repetition")
            if m.group(3) and int(m.group(3)) < int(m.group(1)):
                raise error("Illegal repetition range")
            if not can_repeat:
                # Java repeats an empty node where nothing precedes the braces.
                out.append("(?:)")
            out.append(m.group(0))
            i = m.end()
            continue
        if c == "|":
            last_kind = "open"
        out.append(c)
        i += 1
    if in_class:
        raise error("Unclosed character class")
    if group_stack:
        raise error("Unclosed group")
    out.append(")" * top_level_closers)
    return "".join(out)


_REGEX_CACHE: dict[str, re.Pattern] = {}


def compile_java_regex(pattern: str) -> re.Pattern:
    """Compile a ``java.util.regex`` pattern as an equivalent Python pattern.

    Java's defaults are kept: ``\\w``, ``\\d``, ``\\s``, ``\\b`` and case folding
    are ASCII-only. Java syntax is translated (named groups ``(?<n>...)``,
    ``\\k<n>``, ``\\Q...\\E``, ``\\p{Alpha}``-style classes, ``\\z``, ``\\h``,
    inline flags in the middle of a pattern); constructs Java rejects (such as
    ``(?P<n>...)`` or ``{`` that is not a quantifier) and the few Java has but
    Python lacks (class intersection ``&&``, nested classes, ``\\G``, ``\\X``)
    raise :class:`JavaRegexError`.
    """
    if pattern is None:
        raise JavaRegexError("null pattern")
    cached = _REGEX_CACHE.get(pattern)
    if cached is not None:
        return cached
    translated = _translate_java_regex(pattern)
    try:
        compiled = re.compile(translated, re.ASCII)
    except re.error as exc:
        raise JavaRegexError(f"{exc.msg} near index {exc.pos}\n{pattern}") from None
    if len(_REGEX_CACHE) < 256:
        _REGEX_CACHE[pattern] = compiled
    return compiled


class JavaReplacement:
    """A ``Matcher.replaceFirst`` replacement string: ``$n``, ``${name}``, ``\\`` escapes.

    The template is checked against the pattern's groups up front; a template
    Java would reject raises the same error when it is used (Kafka only calls
    ``replaceFirst`` when a topic matches), via :meth:`expand`.
    """

    def __init__(self, template: str, pattern: re.Pattern):
        self.template = template
        self._parts: list[str | int] = []
        self._error: Exception | None = None
        try:
            self._parts = self._parse(template, pattern)
        except (ValueError, IndexError) as exc:
            self._error = exc

    @staticmethod
    def _parse(template: str, pattern: re.Pattern) -> list[str | int]:
        parts: list[str | int] = []
        literal: list[str] = []
        group_count = pattern.groups
        i, n = 0, len(template)
        while i < n:
            c = template[i]
            if c == "\\":
                i += 1
                if i >= n:
                    raise ValueError("character to be escaped is missing")
                literal.append(template[i])
                i += 1
            elif c == "$":
                i += 1
                if i >= n:
                    raise ValueError("Illegal group reference: group index is missing")
                if template[i] == "{":
                    i += 1
                    start = i
                    while i < n and (template[i].isascii() and template[i].isalnum()):
                        i += 1
                    if start == i:
                        raise ValueError("named capturing group has 0 length name")
                    if i >= n or template[i] != "}":
                        raise ValueError("named capturing group is missing trailing '}'")
                    name = template[start:i]
                    i += 1
                    if not name[0].isalpha():
                        raise ValueError("capturing group name {" + name + "} starts with digit character")
                    if name not in pattern.groupindex:
                        raise ValueError("No group with name {" + name + "}")
                    ref: int = pattern.groupindex[name]
                else:
                    if not template[i].isdigit() or not template[i].isascii():
                        raise ValueError("Illegal group reference")
                    ref = int(template[i])
                    i += 1
                    if ref > group_count:
                        raise IndexError(f"No group {ref}")
                    while i < n and template[i].isascii() and template[i].isdigit():
                        candidate = ref * 10 + int(template[i])
                        if candidate > group_count:
                            break
                        ref = candidate
                        i += 1
                if literal:
                    parts.append("".join(literal))
                    literal.clear()
                parts.append(ref)
            else:
                literal.append(c)
                i += 1
        if literal:
            parts.append("".join(literal))
        return parts

    def expand(self, match: re.Match) -> str:
        if self._error is not None:
            raise self._error
        return "".join(
            part if isinstance(part, str) else (match.group(part) or "") for part in self._parts
        )

    def replace_first(self, pattern: re.Pattern, text: str) -> str:
        """``matcher.replaceFirst(replacement)``: the first match (a search) is replaced."""
        match = pattern.search(text)
        if match is None:
            return text
        return text[:match.start()] + self.expand(match) + text[match.end():]


# ======================================================================================
# Small Java string helpers
# ======================================================================================


def java_split(text: str, separator: str) -> list[str]:
    """``String.split(literal)``: trailing empty strings are removed."""
    parts = text.split(separator)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if parts == [""] and text != "":
        return []
    return parts
