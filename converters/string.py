"""``org.apache.kafka.connect.storage.StringConverter``: text ⇄ an optional STRING.

Reading yields ``(OPTIONAL_STRING_SCHEMA, text)``; writing encodes
``value.toString()`` whatever the schema. ``converter.encoding`` (default
UTF-8) names a Java charset; like Java, undecodable bytes become U+FFFD and
unencodable characters ``?`` instead of failing.
"""

from __future__ import annotations

import codecs
import datetime as dt
import decimal
from typing import Any, Callable, Mapping

from connector.api.config_def import ConfigDef, ConfigKey, ConfigType
from connector.api.errors import ConfigException
from connector.api.java.numbers import (
    decimal_to_string,
    double_to_string,
    float_to_string,
)
from connector.api.record import SchemaAndValue
from connector.api.schema import Schema, Type
from connector.api.struct import Struct
from converters.base import CONVERTER_CONFIG, CONVERTER_TYPE_CONFIG, ConverterType, DataAndHeaderConverter, Headers

__all__ = ["StringConverter"]

ENCODING_CONFIG = "converter.encoding"


def _serde_encoding(side: str, role: str) -> str:
    return f"{side}.{role}.encoding"


# Kafka's StringConverterConfig, plus the (de)serializer keys its StringSerializer and
# StringDeserializer read from the same map, which win over converter.encoding.
CONFIG_DEF = CONVERTER_CONFIG.merged(ConfigDef([
    ConfigKey(ENCODING_CONFIG, ConfigType.STRING, "UTF-8", importance="high",
              doc="character set (Java names: `UTF-8`, `UTF-16`, `ISO-8859-1`, ...)"),
    *(ConfigKey(_serde_encoding(side, role), ConfigType.STRING, None, importance="low",
                doc=f"character set for {verb} a {side}; unset: `converter.encoding`")
      for side in ("key", "value") for role, verb in (("deserializer", "reading"), ("serializer", "writing"))),
]))


class _Charset:
    """Encode/decode functions for a Java charset name, with Java's replacement behaviour."""

    def __init__(self, name: str):
        self.name = name
        self.encode, self.decode = _codec_functions(name)


def _bom_decoder(codec: str, bom_le: bytes, bom_be: bytes) -> Callable[[bytes], str]:
    """Java's ``codec`` (UTF-16, UTF-32) decoder: a byte-order mark says the order, else big-endian (Python: native)."""

    def decode(data: bytes) -> str:
        if data.startswith(bom_le):
            return data[len(bom_le):].decode(f"{codec}-le", "replace")
        if data.startswith(bom_be):
            data = data[len(bom_be):]
        return data.decode(f"{codec}-be", "replace")

    return decode


_JAVA_SPECIFIC: dict[str, tuple[Callable[[str], bytes], Callable[[bytes], str]]] = {
    # Java writes UTF-16 big-endian after a BOM, and UTF-32 big-endian without one.
    "utf-16": (lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be", "replace"),
               _bom_decoder("utf-16", codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)),
    "utf-32": (lambda text: text.encode("utf-32-be", "replace"),
               _bom_decoder("utf-32", codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)),
}


def _codec_functions(name: str) -> tuple[Callable[[str], bytes], Callable[[bytes], str]]:
    try:
        info = codecs.lookup(name)
    except LookupError:
        info = None
    if info is None or not getattr(info, "_is_text_encoding", True):
        raise ConfigException(ENCODING_CONFIG, name, f"Unsupported encoding {name}")
    if info.name in _JAVA_SPECIFIC:
        return _JAVA_SPECIFIC[info.name]
    return (lambda text: text.encode(info.name, "replace")), (lambda data: bytes(data).decode(info.name, "replace"))


def _java_to_string(value: Any, schema: Schema | None, charset: _Charset) -> str:
    """``String.valueOf(value)`` for a Connect value (UTC for dates, as a server would run)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        is_float32 = schema is not None and schema.type is Type.FLOAT32
        return float_to_string(value) if is_float32 else double_to_string(value)
    if isinstance(value, decimal.Decimal):
        return decimal_to_string(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        # Java would print the array's identity ("[B@1b6d3586"); the text is more useful.
        return charset.decode(bytes(value))
    if isinstance(value, (list, tuple)):
        element = schema.value_schema if schema is not None else None
        return "[" + ", ".join(_java_to_string(v, element, charset) for v in value) + "]"
    if isinstance(value, dict):
        key_schema = schema.key_schema if schema is not None else None
        value_schema = schema.value_schema if schema is not None else None
        return "{" + ", ".join(
            f"{_java_to_string(k, key_schema, charset)}={_java_to_string(v, value_schema, charset)}"
            for k, v in value.items()
        ) + "}"
    if isinstance(value, Struct):
        return _struct_to_string(value, charset)
    if isinstance(value, (dt.date, dt.time)):
        return _date_to_string(value)
    return str(value)


def _struct_to_string(value: Struct, charset: _Charset) -> str:
    """``Struct.toString``: the non-null fields as ``name=value``."""
    fields = [
        f"{field.name}={_java_to_string(value.get_without_default(field), field.schema, charset)}"
        for field in value.schema.fields()
        if value.get_without_default(field) is not None
    ]
    return "Struct{" + ",".join(fields) + "}"


def _date_to_string(value: dt.date | dt.time) -> str:
    """``java.util.Date.toString`` in UTC, e.g. ``Thu Jan 01 00:00:00 UTC 1970``."""
    if isinstance(value, dt.time):
        instant = dt.datetime.combine(dt.date(1970, 1, 1), value)
    elif isinstance(value, dt.datetime):
        instant = value.astimezone(dt.timezone.utc) if value.tzinfo else value
    else:
        instant = dt.datetime.combine(value, dt.time())
    return instant.strftime("%a %b %d %H:%M:%S UTC ") + str(instant.year)


class StringConverter(DataAndHeaderConverter):
    """Kafka's StringConverter; also a header converter."""

    CONFIG_DEF = CONFIG_DEF

    def _apply(self, config: Mapping[str, Any]) -> None:
        values = CONFIG_DEF.parse(config)
        side = "key" if ConverterType(values[CONVERTER_TYPE_CONFIG]) is ConverterType.KEY else "value"
        encoding = values[ENCODING_CONFIG]
        self._writer = _Charset(values[_serde_encoding(side, "serializer")] or encoding)
        self._reader = _Charset(values[_serde_encoding(side, "deserializer")] or encoding)

    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers = None) -> SchemaAndValue:
        text = None if data is None else self._reader.decode(bytes(data))
        return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, text)

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers = None) -> bytes | None:
        if value is None:
            return None
        text = value if isinstance(value, str) else _java_to_string(value, schema, self._reader)
        return self._writer.encode(text)
