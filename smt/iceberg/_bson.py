"""Parse MongoDB Extended JSON (what Debezium's MongoDB connector emits) into typed BSON values.

Debezium MongoDB writes ``before``/``after``/``updateDescription.updatedFields``
as strings of Extended JSON, canonical or relaxed: ``{"$oid": ...}``,
``{"$date": ...}``, ``{"$numberLong": "..."}``, ``{"$numberDecimal": "..."}``,
``{"$binary": {...}}`` and so on. Plain JSON numbers are INT32 when they fit,
else INT64, and DOUBLE when written with a point or exponent -- the types the
Java BSON library gives them, which decide the Connect schema downstream.

The reader also accepts what the Java ``JsonReader`` accepts in practice:
single-quoted strings, unquoted keys, a trailing comma, ``NaN``/``Infinity``,
``undefined``, regular-expression literals and the mongo shell's constructors
(``ObjectId("...")``, ``ISODate("...")``, ``new Date(ms)``, ``NumberLong(n)``,
``NumberInt(n)``, ``NumberDecimal("...")``, ``BinData(t, "...")``,
``HexData(t, "...")``, ``UUID("...")``, ``Timestamp(t, i)``, ``MinKey``,
``MaxKey``).

Documents are ``dict`` (insertion-ordered) of ``BsonValue``; arrays are lists.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal
import enum
import json.decoder
import re
import uuid
from dataclasses import dataclass
from typing import Any

from connector.api.errors import DataException

EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class BsonType(enum.Enum):
    DOUBLE = 1
    STRING = 2
    DOCUMENT = 3
    ARRAY = 4
    BINARY = 5
    UNDEFINED = 6
    OBJECT_ID = 7
    BOOLEAN = 8
    DATE_TIME = 9
    NULL = 10
    REGULAR_EXPRESSION = 11
    DB_POINTER = 12
    JAVASCRIPT = 13
    SYMBOL = 14
    JAVASCRIPT_WITH_SCOPE = 15
    INT32 = 16
    TIMESTAMP = 17
    INT64 = 18
    DECIMAL128 = 19
    MIN_KEY = 255
    MAX_KEY = 127


@dataclass(frozen=True)
class BsonValue:
    """A typed BSON value.

    ``value`` by type: DOUBLE float; STRING/JAVASCRIPT/SYMBOL str; INT32/INT64
    int; BOOLEAN bool; DATE_TIME int (ms since the epoch); OBJECT_ID str (24
    lowercase hex digits); DECIMAL128 str (the decimal's text); BINARY
    ``(subtype, bytes)``; TIMESTAMP ``(seconds, increment)``;
    REGULAR_EXPRESSION ``(pattern, options)``; JAVASCRIPT_WITH_SCOPE
    ``(code, scope document)``; DB_POINTER ``(namespace, oid)``; DOCUMENT
    ``dict[str, BsonValue]``; ARRAY ``list[BsonValue]``; NULL, UNDEFINED,
    MIN_KEY, MAX_KEY None.
    """

    type: BsonType
    value: Any = None

    @property
    def is_null(self) -> bool:
        return self.type is BsonType.NULL


NULL = BsonValue(BsonType.NULL)


def document(items: "dict[str, BsonValue] | None" = None) -> BsonValue:
    return BsonValue(BsonType.DOCUMENT, dict(items or {}))


def datetime_of(millis: int) -> _dt.datetime:
    """A DATE_TIME's milliseconds as a UTC datetime (Connect's Timestamp value)."""
    return EPOCH + _dt.timedelta(milliseconds=millis)


def decimal128_text(text: str) -> str:
    """Normalise a Decimal128 literal the way ``Decimal128.toString`` prints it."""
    try:
        value = decimal.Decimal(text.strip())
    except decimal.InvalidOperation as exc:
        raise DataException(f"Invalid Decimal128 value: {text}") from exc
    if value.is_nan():
        return "NaN"
    return str(value)


# --- the reader -------------------------------------------------------------------------

_NUMBER = re.compile(r"-?(?:Infinity|(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)")
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_WS = re.compile(r"\s*")
# The json module's own string-literal scanner (C-accelerated); not declared in typeshed.
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
_ISO_FRACTION = re.compile(r"(\.\d+)")


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    # -- low level --

    def error(self, message: str) -> DataException:
        return DataException(f"Invalid JSON input. {message} (position {self.pos})")

    def skip_ws(self) -> None:
        match = _WS.match(self.text, self.pos)
        if match is not None:  # always: _WS matches the empty string
            self.pos = match.end()

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = self.text[self.pos] if self.pos < len(self.text) else "end of input"
            raise self.error(f"Expected '{char}', found '{found}'")
        self.pos += 1

    def accept(self, char: str) -> bool:
        if self.peek() == char:
            self.pos += 1
            return True
        return False

    def string(self) -> str:
        quote = self.peek()
        if quote == '"':
            try:
                value, self.pos = _scanstring(self.text, self.pos + 1, True)
            except ValueError as exc:
                raise self.error(str(exc)) from exc
            return value
        if quote == "'":
            # Single-quoted: translate to a double-quoted literal and decode that.
            out = []
            i = self.pos + 1
            while True:
                if i >= len(self.text):
                    raise self.error("Unterminated string")
                ch = self.text[i]
                if ch == "\\":
                    nxt = self.text[i + 1 : i + 2]
                    out.append("'" if nxt == "'" else "\\" + nxt)
                    i += 2
                    continue
                if ch == "'":
                    break
                out.append('\\"' if ch == '"' else ch)
                i += 1
            self.pos = i + 1
            try:
                return _scanstring("".join(out) + '"', 0, True)[0]
            except ValueError as exc:
                raise self.error(str(exc)) from exc
        raise self.error("Expected a string")

    def identifier(self) -> str | None:
        self.skip_ws()
        match = _IDENT.match(self.text, self.pos)
        if not match:
            return None
        self.pos = match.end()
        return match.group(0)

    # -- values --

    def value(self) -> BsonValue:
        ch = self.peek()
        if ch == "{":
            return self.document()
        if ch == "[":
            return self.array()
        if ch in "\"'":
            return BsonValue(BsonType.STRING, self.string())
        if ch == "/":
            return self.regex_literal()
        if ch == "-" or ch.isdigit():
            return self.number()
        name = self.identifier()
        if name is None:
            raise self.error(f"Unexpected character '{ch or 'end of input'}'")
        return self.keyword(name)

    def number(self) -> BsonValue:
        match = _NUMBER.match(self.text, self.pos)
        if not match or match.end() == self.pos:
            raise self.error("Invalid number")
        self.pos = match.end()
        text = match.group(0)
        if "Infinity" in text:
            return BsonValue(BsonType.DOUBLE, float(text.replace("Infinity", "inf")))
        if match.group(1) or match.group(2):
            return BsonValue(BsonType.DOUBLE, float(text))
        number = int(text)
        if -(2**31) <= number < 2**31:
            return BsonValue(BsonType.INT32, number)
        if -(2**63) <= number < 2**63:
            return BsonValue(BsonType.INT64, number)
        raise self.error(f"Number {text} is out of the range of a 64-bit integer")

    def keyword(self, name: str) -> BsonValue:
        if name == "true":
            return BsonValue(BsonType.BOOLEAN, True)
        if name == "false":
            return BsonValue(BsonType.BOOLEAN, False)
        if name == "null":
            return NULL
        if name == "undefined":
            return BsonValue(BsonType.UNDEFINED)
        if name == "NaN":
            return BsonValue(BsonType.DOUBLE, float("nan"))
        if name == "Infinity":
            return BsonValue(BsonType.DOUBLE, float("inf"))
        if name in ("MinKey", "MaxKey"):
            if self.accept("("):
                self.expect(")")
            return BsonValue(BsonType.MIN_KEY if name == "MinKey" else BsonType.MAX_KEY)
        if name == "new":
            name = self.identifier() or ""
        return self.constructor(name)

    def arguments(self) -> list[BsonValue]:
        self.expect("(")
        args: list[BsonValue] = []
        if self.accept(")"):
            return args
        while True:
            args.append(self.value())
            if self.accept(")"):
                return args
            self.expect(",")

    def constructor(self, name: str) -> BsonValue:
        args = self.arguments()
        try:
            return _construct(name, args)
        except (ValueError, TypeError, IndexError, KeyError, binascii.Error) as exc:
            raise self.error(f"Invalid arguments for {name}(...): {exc}") from exc

    def regex_literal(self) -> BsonValue:
        i = self.pos + 1
        pattern = []
        while True:
            if i >= len(self.text):
                raise self.error("Unterminated regular expression")
            ch = self.text[i]
            if ch == "\\" and i + 1 < len(self.text):
                pattern.append(self.text[i : i + 2])
                i += 2
                continue
            if ch == "/":
                break
            pattern.append(ch)
            i += 1
        self.pos = i + 1
        options = _IDENT.match(self.text, self.pos)
        flags = ""
        if options:
            flags = options.group(0)
            self.pos = options.end()
        return BsonValue(BsonType.REGULAR_EXPRESSION, ("".join(pattern), "".join(sorted(flags))))

    def array(self) -> BsonValue:
        self.expect("[")
        items: list[BsonValue] = []
        while True:
            if self.accept("]"):
                return BsonValue(BsonType.ARRAY, items)
            items.append(self.value())
            if not self.accept(","):
                self.expect("]")
                return BsonValue(BsonType.ARRAY, items)

    def key(self) -> str:
        ch = self.peek()
        if ch in "\"'":
            return self.string()
        name = self.identifier()
        if name is None:
            raise self.error("Expected a field name")
        return name

    def document(self) -> BsonValue:
        self.expect("{")
        items: dict[str, BsonValue] = {}
        while True:
            if self.accept("}"):
                break
            name = self.key()
            self.expect(":")
            items[name] = self.value()
            if not self.accept(","):
                self.expect("}")
                break
        return _extended(items)


def _arg_int(value: BsonValue) -> int:
    if value.type in (BsonType.INT32, BsonType.INT64):
        return value.value
    if value.type is BsonType.DOUBLE:
        return int(value.value)
    if value.type is BsonType.STRING:
        return int(value.value.strip())
    raise ValueError(f"expected a number, found {value.type.name}")


def _arg_str(value: BsonValue) -> str:
    if value.type is not BsonType.STRING:
        raise ValueError(f"expected a string, found {value.type.name}")
    return value.value


def _object_id(text: str) -> BsonValue:
    if not re.fullmatch(r"[0-9a-fA-F]{24}", text):
        raise ValueError(f"invalid hexadecimal representation of an ObjectId: [{text}]")
    return BsonValue(BsonType.OBJECT_ID, text.lower())


def _iso_millis(text: str) -> int:
    text = text.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Python accepts at most 6 fractional digits.
    text = _ISO_FRACTION.sub(lambda m: m.group(1)[:7], text, count=1)
    parsed = _dt.datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    delta = parsed - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _binary(subtype: int, data: bytes) -> BsonValue:
    return BsonValue(BsonType.BINARY, (subtype, data))


def _uuid_binary(text: str) -> BsonValue:
    return _binary(4, uuid.UUID(text).bytes)


def _construct(name: str, args: list[BsonValue]) -> BsonValue:
    if name == "ObjectId":
        return _object_id(_arg_str(args[0]))
    if name in ("ISODate", "Date"):
        if not args:
            now = _dt.datetime.now(_dt.timezone.utc)
            return BsonValue(BsonType.DATE_TIME, _iso_millis(now.isoformat()))
        if args[0].type is BsonType.STRING:
            return BsonValue(BsonType.DATE_TIME, _iso_millis(args[0].value))
        return BsonValue(BsonType.DATE_TIME, _arg_int(args[0]))
    if name == "NumberLong":
        return BsonValue(BsonType.INT64, _arg_int(args[0]))
    if name == "NumberInt":
        return BsonValue(BsonType.INT32, _arg_int(args[0]))
    if name == "NumberDecimal":
        arg = args[0]
        text = arg.value if arg.type is BsonType.STRING else str(arg.value)
        return BsonValue(BsonType.DECIMAL128, decimal128_text(text))
    if name == "BinData":
        return _binary(_arg_int(args[0]), base64.b64decode(_arg_str(args[1]), validate=True))
    if name == "HexData":
        return _binary(_arg_int(args[0]), bytes.fromhex(_arg_str(args[1])))
    if name == "UUID":
        return _uuid_binary(_arg_str(args[0]))
    if name == "Timestamp":
        return BsonValue(BsonType.TIMESTAMP, (_arg_int(args[0]), _arg_int(args[1])))
    if name == "RegExp":
        options = _arg_str(args[1]) if len(args) > 1 else ""
        return BsonValue(BsonType.REGULAR_EXPRESSION, (_arg_str(args[0]), options))
    if name == "DBPointer":
        oid = args[1]
        if oid.type is not BsonType.OBJECT_ID:
            raise ValueError("DBPointer needs an ObjectId")
        return BsonValue(BsonType.DB_POINTER, (_arg_str(args[0]), oid.value))
    raise ValueError(f"unknown constructor {name}")


def _hex_subtype(value: BsonValue) -> int:
    if value.type is BsonType.STRING:
        return int(value.value, 16)
    return _arg_int(value)


def _extended(items: dict[str, BsonValue]) -> BsonValue:
    """Turn an Extended JSON wrapper object into its BSON value; other objects are documents."""
    if not items:
        return BsonValue(BsonType.DOCUMENT, items)
    keys = set(items)
    first = next(iter(items))
    if not first.startswith("$"):
        return BsonValue(BsonType.DOCUMENT, items)
    try:
        converted = _extended_value(keys, items)
    except (ValueError, TypeError, KeyError, IndexError, binascii.Error) as exc:
        raise DataException(f"Invalid JSON input. Invalid {first} value: {exc}") from exc
    return converted if converted is not None else BsonValue(BsonType.DOCUMENT, items)


def _extended_value(keys: set[str], items: dict[str, BsonValue]) -> BsonValue | None:
    def only(key: str) -> bool:
        return keys == {key}

    if only("$oid"):
        return _object_id(_arg_str(items["$oid"]))
    if only("$numberLong"):
        return BsonValue(BsonType.INT64, int(_arg_str(items["$numberLong"])))
    if only("$numberInt"):
        return BsonValue(BsonType.INT32, int(_arg_str(items["$numberInt"])))
    if only("$numberDouble"):
        text = _arg_str(items["$numberDouble"])
        return BsonValue(BsonType.DOUBLE, float(text.replace("Infinity", "inf")))
    if only("$numberDecimal"):
        return BsonValue(BsonType.DECIMAL128, decimal128_text(_arg_str(items["$numberDecimal"])))
    if only("$date"):
        date = items["$date"]
        if date.type is BsonType.STRING:
            return BsonValue(BsonType.DATE_TIME, _iso_millis(date.value))
        return BsonValue(BsonType.DATE_TIME, _arg_int(date))
    if only("$binary"):
        binary = items["$binary"]
        if binary.type is BsonType.DOCUMENT:  # canonical: {"base64": ..., "subType": "hex"}
            fields = binary.value
            return _binary(_hex_subtype(fields["subType"]), base64.b64decode(_arg_str(fields["base64"])))
        return None
    if keys == {"$binary", "$type"}:  # legacy
        return _binary(_hex_subtype(items["$type"]), base64.b64decode(_arg_str(items["$binary"])))
    if only("$uuid"):
        return _uuid_binary(_arg_str(items["$uuid"]))
    if only("$timestamp"):
        fields = items["$timestamp"].value
        return BsonValue(BsonType.TIMESTAMP, (_arg_int(fields["t"]), _arg_int(fields["i"])))
    if only("$regularExpression"):
        fields = items["$regularExpression"].value
        return BsonValue(
            BsonType.REGULAR_EXPRESSION, (_arg_str(fields["pattern"]), _arg_str(fields["options"]))
        )
    if keys in ({"$regex"}, {"$regex", "$options"}) and items["$regex"].type is BsonType.STRING:
        options = _arg_str(items["$options"]) if "$options" in items else ""
        return BsonValue(BsonType.REGULAR_EXPRESSION, (items["$regex"].value, options))
    if only("$code"):
        return BsonValue(BsonType.JAVASCRIPT, _arg_str(items["$code"]))
    if keys == {"$code", "$scope"}:
        scope = items["$scope"]
        if scope.type is not BsonType.DOCUMENT:
            raise ValueError("$scope must be a document")
        return BsonValue(BsonType.JAVASCRIPT_WITH_SCOPE, (_arg_str(items["$code"]), scope.value))
    if only("$symbol"):
        return BsonValue(BsonType.SYMBOL, _arg_str(items["$symbol"]))
    if only("$minKey"):
        return BsonValue(BsonType.MIN_KEY)
    if only("$maxKey"):
        return BsonValue(BsonType.MAX_KEY)
    if only("$undefined"):
        return BsonValue(BsonType.UNDEFINED)
    if only("$dbPointer"):
        fields = items["$dbPointer"].value
        oid = fields["$id"]
        if oid.type is not BsonType.OBJECT_ID:
            raise ValueError("$dbPointer.$id must be an ObjectId")
        return BsonValue(BsonType.DB_POINTER, (_arg_str(fields["$ref"]), oid.value))
    return None


def parse_value(text: str) -> BsonValue:
    """Parse one Extended JSON value (trailing content is an error)."""
    reader = _Reader(text)
    value = reader.value()
    if reader.peek():
        raise reader.error("Unexpected content after the JSON value")
    return value


def parse_document(text: str) -> dict[str, BsonValue]:
    """Parse an Extended JSON object into an ordered dict of BSON values (``BsonDocument.parse``)."""
    value = parse_value(text)
    if value.type is not BsonType.DOCUMENT:
        raise DataException(f"Invalid JSON input: expected a document, found {value.type.name}")
    return value.value
