"""Config keys declared up front and parsed once: Kafka's ``ConfigDef``.

The one config parser of icefloe: the connector's own keys, every converter
and every SMT/predicate declare their keys here, so a raw value is accepted or
refused the same way wherever it is written. Types, defaults, validators,
importance, documentation and a group (the heading a key is documented under),
with Kafka's ``ConfigDef.parseType`` rules and error texts
(``Missing required configuration "x" which has no default value.``,
``Invalid value <v> for configuration <k>: <reason>``).
"""

from __future__ import annotations

import builtins
import enum
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping

from connector.api.errors import ConfigException
from connector.api.java.regex import compile_java_regex
from connector.api.java.strings import class_name, java_trim
from connector.api.java.value_of import java_str
from connector.api.sentinel import Sentinel

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
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


class _NoDefault(Sentinel):
    """A key without a default is required; the marker stays itself when a ConfigDef is pickled to an executor."""

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()

Validator = Callable[[str, Any], None]


@dataclass(eq=False, repr=False, slots=True)
class ConfigKey:
    """One declared setting (``ConfigDef.ConfigKey``).

    ``group`` is Kafka's ``ConfigKey.group``: keys several plugins share (the
    Schema Registry client's, ``converter.type``) carry one, so the generated
    documentation lists them once for all of those plugins.
    """

    name: str
    type: ConfigType
    default: Any = NO_DEFAULT
    validator: Validator | None = None
    importance: str = "medium"
    doc: str = ""
    group: str | None = None

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT

    def with_name(self, name: str) -> "ConfigKey":
        return replace(self, name=name)

    def __repr__(self) -> str:
        return f"ConfigKey({self.name!r}, {self.type.name}, default={self.default!r})"


_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")
# Integer.parseInt: a sign, then decimal digits of any script (Character.digit accepts
# every Unicode Nd digit, as Python's \d and int() do); no underscores, no radix prefix.
_JAVA_INT = re.compile(r"[+-]?\d+")
# Double.valueOf: Java's floating-point literal grammar, with the optional f/d suffix,
# NaN/Infinity spelled exactly so, and hexadecimal literals with a binary exponent.
_JAVA_DECIMAL = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)")
_JAVA_HEX_FLOAT = re.compile(r"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?")
_INT_BOUNDS = {ConfigType.SHORT: 2**15, ConfigType.INT: 2**31, ConfigType.LONG: 2**63}
_BUILTIN_TYPE = builtins.type  # parse_type's parameter ``type`` shadows the builtin
_TYPE_WORDS = {
    ConfigType.INT: "a 32-bit integer",
    ConfigType.SHORT: "a 16-bit integer (short)",
    ConfigType.LONG: "a 64-bit integer (long)",
}


def _java_equals_ignore_case(text: str, expected: str) -> bool:
    """``String.equalsIgnoreCase``: char by char, equal when equal upper- or lower-cased.

    Unlike ``str.lower()``, this matches e.g. ``"falſe"`` (long s upper-cases to S) as Java does.
    """
    def upper(c: str) -> str:
        u = c.upper()
        return u if len(u) == 1 else c  # Character.toUpperCase maps one char to one char

    def lower(c: str) -> str:
        low = c.lower()
        return low if len(low) == 1 else c

    return len(text) == len(expected) and all(
        a == b or upper(a) == upper(b) or lower(upper(a)) == lower(upper(b)) for a, b in zip(text, expected))


def _java_double(text: str) -> float | None:
    """``Double.valueOf(text)`` of a trimmed string, or None where Java throws."""
    if _JAVA_DECIMAL.fullmatch(text):
        return float(text.rstrip("fFdD").replace("Infinity", "inf"))
    hexa = _JAVA_HEX_FLOAT.fullmatch(text)
    if hexa:
        return float.fromhex(hexa.group(1) + "0x" + hexa.group(2))
    return None

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
            if _java_equals_ignore_case(trimmed, "true"):
                return True
            if _java_equals_ignore_case(trimmed, "false"):
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
            double = _java_double(trimmed)
            if double is None:
                raise ConfigException(name, value, f"Not a number of type {type.name}")
            return double
        raise ConfigException(name, value, f"Expected value to be a double, but it was a {class_name(value)}")
    if type is ConfigType.LIST:
        if isinstance(value, (list, tuple)):
            return list(value)
        if trimmed is not None:
            return [] if trimmed == "" else _COMMA_WITH_WHITESPACE.split(trimmed)
        raise ConfigException(name, value, "Expected a comma separated list.")
    if type is ConfigType.CLASS:
        # Kafka loads the class here; a Python plugin registry owns that step, so a
        # name is returned trimmed for the reading plugin to resolve.
        if trimmed is not None:
            return trimmed
        if isinstance(value, _BUILTIN_TYPE):
            return value
        raise ConfigException(name, value, "Expected a Class instance or class name.")
    raise AssertionError(f"Unknown type {type}")


class ConfigDef:
    """Declared config keys of a connector, converter, transformation or predicate, parsed in one go."""

    def __init__(self, keys: Iterable[ConfigKey] = ()):
        self._keys: dict[str, ConfigKey] = {}
        for key in keys:
            self._add(key)

    def _add(self, key: ConfigKey) -> None:
        if key.name in self._keys:
            raise ConfigException(f"Configuration {key.name} is defined twice.")
        self._keys[key.name] = key

    def define(self, name: str, type: ConfigType, default: Any = NO_DEFAULT,
               validator: Validator | None = None, importance: str = "medium", doc: str = "",
               group: str | None = None) -> "ConfigDef":
        """Declare a key; returns ``self`` so declarations chain, as in Kafka."""
        self._add(ConfigKey(name, type, default, validator, importance, doc, group))
        return self

    def merged(self, other: "ConfigDef") -> "ConfigDef":
        """A new ConfigDef with this one's keys, then ``other``'s (a key declared twice is an error)."""
        return ConfigDef([*self._keys.values(), *other._keys.values()])

    def __contains__(self, name: object) -> bool:
        return name in self._keys

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
        if key.type is ConfigType.PASSWORD:
            try:
                return self._parse_value(key, value, is_set)
            except ConfigException as exc:
                raise _hidden(exc, key.name) from None
        return self._parse_value(key, value, is_set)

    def _parse_value(self, key: ConfigKey, value: Any, is_set: bool) -> Any:
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
                if exc.config_key is None:
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
    def __init__(self, check: Callable[[str, Any], object], description: str, options: tuple[str, ...] = ()):
        self._check = check
        self._description = description
        #: The fixed set of accepted values, if there is one (the REST API offers them as recommended values).
        self.options = options

    def __call__(self, name: str, value: Any) -> None:
        self._check(name, value)

    def __str__(self) -> str:
        return self._description

    __repr__ = __str__


def lambda_validator(check: Callable[[str, Any], object], description: str) -> Validator:
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


def _non_empty_string_without_control_chars(name: str, value: Any) -> None:
    if value is None:
        raise ConfigException(name, None, "entry must be non null")
    if value == "":
        raise ConfigException(name, value, "String may not be empty")
    controls = [str(ord(c)) for c in value if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F]
    if controls:
        raise ConfigException(name, value, "String may not contain control sequences but had the following "
                                           "ASCII chars: " + ", ".join(controls))


non_empty_string_without_control_chars: Validator = _Validator(
    _non_empty_string_without_control_chars, "non-empty string without ISO control characters")


def valid_string(*options: str) -> Validator:
    def check(name: str, value: Any) -> None:
        if value not in options:
            raise ConfigException(name, value, "String must be one of: " + ", ".join(options))

    return _Validator(check, "[" + ", ".join(options) + "]", tuple(options))


def case_insensitive_valid_string(*options: str) -> Validator:
    upper = {o.upper() for o in options}

    def check(name: str, value: Any) -> None:
        if value is None or value.upper() not in upper:
            raise ConfigException(name, value, "String must be one of (case insensitive): " + ", ".join(options))

    return _Validator(check, "(case insensitive) [" + ", ".join(options) + "]", tuple(options))


def _valid_regex(name: str, value: Any) -> None:
    try:
        compile_java_regex(value)
    except (ValueError, re.error, TypeError) as exc:  # JavaRegexError is a ValueError; TypeError: not text
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


def _hidden(exc: ConfigException, name: str) -> ConfigException:
    """The same error with a PASSWORD value shown as ``[hidden]``, as Kafka's ``Password.toString`` does."""
    if exc.value is None and exc.config_value is None:
        return exc  # the message quotes no value (e.g. a missing required key)
    hidden = ConfigException(exc.name or name, "[hidden]", exc.reason)
    hidden.config_key = exc.config_key
    hidden.config_value = "[hidden]" if exc.config_key is not None else None
    return hidden
