"""One ConfigDef: the same raw value is accepted or refused the same way everywhere.

The same values are written (a) into the connector config, (b) into an SMT's
settings inside it, (c) into a converter's settings, each through that
component's real entry point; all three must accept them alike, or refuse
them with the same Kafka text (the key's name aside). Property tests compare
INT and BOOLEAN parsing with reference models of Java's ``Integer.parseInt``
of the trimmed text and Kafka's boolean rule (``true``/``false``, any case,
after trimming).
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.api.config_def import ConfigType, parse_type
from connector.api.errors import ConfigException
from connector.config.connect_config import CONNECT_CONFIG, parse_connect_config
from connector.config.iceberg_config import parse_iceberg_config
from connector.config.sink_config import SinkConfig
from converters.confluent.serde_config import SERDE_CONFIG
from converters.json.converter import JsonConverter
from smt.chain import TransformationChain
from smt.transforms.replace_field import Value as ReplaceFieldValue

CONNECT = {"name": "n", "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "topics": "t"}
ICEBERG = {"iceberg.tables": "db.t", "iceberg.catalog.type": "sql"}
SMT = {"transforms": "t"}

RAW_VALUES = ["1_000", " 42 ", "+7", "-7", "0x10", "1e3", "true", "TRUE", " yes", " false\t", "", "  ",
              2**31, 42, True, "2147483647", "2147483648", "-2147483648", "٤٢", "a, b ,c", " a ,, b ",
              ["a", "b"]]


def _connector_int(raw: Any) -> Callable[[], Any]:
    return lambda: parse_iceberg_config({**ICEBERG, "iceberg.control.commit.threads": raw})


def _connector_boolean(raw: Any) -> Callable[[], Any]:
    return lambda: parse_connect_config({**CONNECT, "errors.log.enable": raw})


def _connector_list(raw: Any) -> Callable[[], Any]:
    return lambda: parse_connect_config({**CONNECT, "predicates": raw})


def _smt(type_name: str, key: str, raw: Any, **other: str) -> Callable[[], Any]:
    settings_ = {f"transforms.t.{k.replace('_', '.')}": v for k, v in other.items()}
    return lambda: TransformationChain.from_config(
        {**SMT, "transforms.t.type": type_name, **settings_, f"transforms.t.{key}": raw})


def _converter(key: str, raw: Any) -> Callable[[], Any]:
    return lambda: JsonConverter().configure({key: raw}, is_key=False)


# (connector, SMT, converter) entry points writing ``raw`` to a key of each type.
COMPONENTS = {
    "INT": lambda raw: (_connector_int(raw),
                        _smt("org.apache.kafka.connect.transforms.SetSchemaMetadata$Value", "schema.version", raw,
                             schema_name="s"),
                        _converter("schemas.cache.size", raw)),
    "BOOLEAN": lambda raw: (_connector_boolean(raw),
                            _smt("org.apache.kafka.connect.transforms.ExtractField$Value",
                                 "replace.null.with.default", raw, field="f"),
                            _converter("schemas.enable", raw)),
    "LIST": lambda raw: (_connector_list(raw),
                         _smt("org.apache.kafka.connect.transforms.ReplaceField$Value", "exclude", raw),
                         # no Kafka or Confluent converter declares a free-form LIST key; the Schema
                         # Registry URLs are one, checked through the same ConfigDef below
                         lambda: parse_type("schema.registry.url", raw, ConfigType.LIST)),
}

KEYS = {
    "INT": ("iceberg.control.commit.threads", "transforms.t.schema.version", "schemas.cache.size"),
    "BOOLEAN": ("errors.log.enable", "transforms.t.replace.null.with.default", "schemas.enable"),
    "LIST": ("predicates", "transforms.t.exclude", "schema.registry.url"),
}


def outcome(entry: Callable[[], Any], key: str) -> str:
    """``accepted``, or the refusal's text with the key's name made generic."""
    try:
        entry()
    except ConfigException as exc:
        return "refused: " + str(exc).replace(key, "<key>")
    return "accepted"


def outcomes(type_name: str, raw: Any) -> list[str]:
    return [outcome(entry, key) for entry, key in zip(COMPONENTS[type_name](raw), KEYS[type_name])]


@pytest.mark.parametrize("type_name", sorted(COMPONENTS))
@pytest.mark.parametrize("raw", RAW_VALUES, ids=repr)
def test_connector_smt_and_converter_agree(type_name, raw):
    connector, smt, converter = outcomes(type_name, raw)
    assert connector == smt == converter


@pytest.mark.parametrize("raw", [" a , b ", "a,,b", "", ["x", "y"]], ids=repr)
def test_list_values_parse_alike(raw):
    parsed = [CONNECT_CONFIG.parse({**CONNECT, "predicates": raw})["predicates"],
              ReplaceFieldValue().config().parse({"exclude": raw})["exclude"],
              SERDE_CONFIG.parse({"schema.registry.url": raw})["schema.registry.url"]]
    assert parsed == [parsed[0]] * 3


@pytest.mark.parametrize("key", ["errors.log.enable", "transforms.t.replace.null.with.default",
                                 "value.converter.schemas.enable"])
def test_null_is_refused_before_any_component(key):
    # Connect's REST layer refuses JSON null for every key alike; no ConfigDef ever sees it.
    props = {**CONNECT, **ICEBERG, "transforms": "t", "transforms.t.field": "f",
             "transforms.t.type": "org.apache.kafka.connect.transforms.ExtractField$Value", key: None}
    with pytest.raises(ConfigException) as refused:
        SinkConfig.parse(props)
    assert str(refused.value) == (f"Invalid value null for configuration {key}: "
                                  "Null value can not be supplied as the configuration value.")


@pytest.mark.parametrize("raw, expected", [
    ("1_000", None), (" 42 ", 42), ("+7", 7), ("0x10", None), ("1e3", None), ("", None), ("٤٢", 42),
    (2**31, None), ("2147483647", 2**31 - 1), ("-2147483649", None), (True, None),
])
def test_int_follows_integer_parse_int(raw, expected):
    outcome_ = outcomes("INT", raw)[0]
    assert (outcome_ == "accepted") == (expected is not None), outcome_


@pytest.mark.parametrize("raw, expected", [
    ("1e3", 1000.0), (" 42 ", 42.0), ("1_000", None), ("0x10", None), ("0x1p4", 16.0), ("2.5f", 2.5),
    ("NaN", math.nan), ("-Infinity", -math.inf), ("inf", None), ("nan", None), ("", None), (7, 7.0),
    (True, None),
])
def test_double_follows_double_value_of(raw, expected):
    # No connector, converter or SMT key is a DOUBLE; the ConfigDef they share is checked directly.
    try:
        parsed = parse_type("k", raw, ConfigType.DOUBLE)
    except ConfigException:
        parsed = None
    assert parsed == expected or (parsed is not None and math.isnan(parsed) and math.isnan(expected))


def test_list_items_are_trimmed_and_empty_is_empty():
    assert parse_type("k", " a ,, b ", ConfigType.LIST) == ["a", "", "b"]
    assert parse_type("k", "  ", ConfigType.LIST) == []


# --- property tests against reference models ---------------------------------------------------


def java_trim(text: str) -> str:
    """``String.trim()``: every char up to U+0020 is trimmed, nothing else."""
    return text.strip("".join(map(chr, range(0x21))))


def integer_parse_int(text: str) -> int | None:
    """``Integer.parseInt(text)``: a sign, then decimal digits of any script, within 32 bits; else None."""
    sign, digits = (-1, text[1:]) if text[:1] == "-" else (1, text[1:] if text[:1] == "+" else text)
    values = [unicodedata.decimal(c, None) for c in digits]
    if not values or None in values:
        return None
    number = sign * int("".join(map(str, values)))
    return number if -(2**31) <= number < 2**31 else None


def kafka_boolean(text: str) -> bool | None:
    """Kafka's BOOLEAN: ``equalsIgnoreCase`` with true or false; else None."""
    def same(a: str, b: str) -> bool:
        up_a, up_b = (a.upper() if len(a.upper()) == 1 else a), (b.upper() if len(b.upper()) == 1 else b)
        return a == b or up_a == up_b or up_a.lower() == up_b.lower()

    for word, value in (("true", True), ("false", False)):
        if len(text) == len(word) and all(same(a, b) for a, b in zip(text, word)):
            return value
    return None


NEAR_MISSES = st.text(alphabet=st.sampled_from("truefalsTRUEFALSſ \t\n\x0b\u00a0+-_0123456789٤xe.,"), max_size=12)
RANDOM_TEXT = st.one_of(NEAR_MISSES, st.text(max_size=12))


@settings(max_examples=300, deadline=None)
@given(RANDOM_TEXT)
def test_int_matches_integer_parse_int(text):
    expected = integer_parse_int(java_trim(text))
    results = outcomes("INT", text)
    assert results == [results[0]] * 3
    assert (results[0] == "accepted") == (expected is not None), (text, results[0])
    if expected is not None:
        assert parse_type("k", text, ConfigType.INT) == expected


@settings(max_examples=300, deadline=None)
@given(RANDOM_TEXT)
def test_boolean_matches_kafka(text):
    expected = kafka_boolean(java_trim(text))
    results = outcomes("BOOLEAN", text)
    assert results == [results[0]] * 3
    assert (results[0] == "accepted") == (expected is not None), (text, results[0])
    if expected is not None:
        assert parse_type("k", text, ConfigType.BOOLEAN) is expected
