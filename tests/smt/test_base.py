"""smt.base: ConfigDef parsing (and Kafka's NonEmptyListValidatorTest), SimpleDateFormat and
java.util.regex compatibility checked against tables produced by a JDK, caching and helpers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.api import (
    ConfigException,
    DataException,
    Header,
    Schema,
    SchemaBuilder,
    Struct,
)
from connector.api.config_def import (
    NO_DEFAULT,
    ConfigDef,
    ConfigType,
    non_empty_list,
    parse_type,
)
from connector.api.java.dateformat import JavaDateFormat, UnsupportedPatternError
from connector.api.java.regex import JavaReplacement, compile_java_regex
from connector.api.java.strings import java_split
from connector.api.lru import LRUCache
from smt.base import (
    checked_header,
    copy_schema_basics,
    require_map,
    require_sink_record,
    require_struct,
)

# --- ConfigDef ------------------------------------------------------------------------------------


def test_parse_types_like_kafka():
    assert parse_type("k", " a , b,c ", ConfigType.LIST) == ["a", "b", "c"]
    assert parse_type("k", "", ConfigType.LIST) == []
    assert parse_type("k", "  ", ConfigType.LIST) == []
    assert parse_type("k", "a,,b", ConfigType.LIST) == ["a", "", "b"]
    assert parse_type("k", ["x"], ConfigType.LIST) == ["x"]
    assert parse_type("k", " TRUE ", ConfigType.BOOLEAN) is True
    assert parse_type("k", False, ConfigType.BOOLEAN) is False
    assert parse_type("k", " 42 ", ConfigType.INT) == 42
    assert parse_type("k", 7, ConfigType.LONG) == 7
    assert parse_type("k", "  text ", ConfigType.STRING) == "text"
    assert parse_type("k", 5, ConfigType.STRING) == "5"  # JSON scalars are read as their text
    assert parse_type("k", True, ConfigType.STRING) == "true"
    assert parse_type("k", None, ConfigType.INT) is None


@pytest.mark.parametrize("value, type_, message", [
    ("yes", ConfigType.BOOLEAN, "Invalid value yes for configuration k: Expected value to be either true or false"),
    ("1.5", ConfigType.INT, "Invalid value 1.5 for configuration k: Not a number of type INT"),
    ("2147483648", ConfigType.INT, "Invalid value 2147483648 for configuration k: Not a number of type INT"),
    ("1_000", ConfigType.LONG, "Invalid value 1_000 for configuration k: Not a number of type LONG"),
    (3.5, ConfigType.INT, "Invalid value 3.5 for configuration k: Expected value to be a 32-bit integer, "
                          "but it was a float"),
    ({"a": 1}, ConfigType.LIST, "Invalid value {'a': 1} for configuration k: Expected a comma separated list."),
])
def test_parse_type_errors(value, type_, message):
    with pytest.raises(ConfigException) as raised:
        parse_type("k", value, type_)
    assert str(raised.value) == message


def test_required_defaults_validators_and_unknown_keys():
    config_def = (ConfigDef().define("req", ConfigType.STRING)
                  .define("opt", ConfigType.INT, 3)
                  .define("list", ConfigType.LIST, NO_DEFAULT, non_empty_list))
    with pytest.raises(ConfigException) as raised:
        config_def.parse({"list": "a"})
    assert str(raised.value) == 'Missing required configuration "req" which has no default value.'
    assert config_def.parse({"req": "x", "list": "a,b", "other": 1}) == {"req": "x", "opt": 3, "list": ["a", "b"]}
    # A key that is present with a null value counts as set: validators see None, no default is used.
    assert config_def.parse({"req": None, "list": "a"})["req"] is None
    with pytest.raises(ConfigException, match=r"^Invalid value \[\] for configuration list: Empty list$"):
        config_def.parse({"req": "x", "list": ""})


def test_validate_collects_messages_and_prefixed_names():
    config_def = ConfigDef().define("a", ConfigType.INT).define("b", ConfigType.BOOLEAN, False)
    assert config_def.validate({"a": "x"}) == {"a": ["Invalid value x for configuration a: Not a number of type INT"],
                                               "b": []}
    with pytest.raises(ConfigException, match='^Missing required configuration "transforms.t.a" which'):
        config_def.prefixed("transforms.t.").parse({"a": "1"})


def test_define_twice():
    with pytest.raises(ConfigException, match="^Configuration a is defined twice.$"):
        ConfigDef().define("a", ConfigType.INT).define("a", ConfigType.INT)


# NonEmptyListValidatorTest
def test_null_list():
    with pytest.raises(ConfigException):
        non_empty_list("foo", None)


def test_empty_list():
    with pytest.raises(ConfigException):
        non_empty_list("foo", [])


def test_valid_list():
    non_empty_list("foo", ["foo"])


# --- Requirements, SchemaUtil, cache, headers -------------------------------------------------


def test_requirement_messages():
    with pytest.raises(
        DataException, match=r"^Only Map objects supported in absence of schema for \[p\], found: list$"
    ):
        require_map([], "p")
    with pytest.raises(DataException, match=r"^Only Struct objects supported for \[p\], found: null$"):
        require_struct(None, "p")
    with pytest.raises(DataException, match=r"^Only SinkRecord supported for \[p\], found: dict$"):
        require_sink_record({}, "p")


def test_copy_schema_basics():
    source = SchemaBuilder.int32().name("n").version(2).doc("d").parameter("k", "v").optional().build()
    copied = copy_schema_basics(source).build()
    assert (copied.type, copied.name, copied.version, copied.doc, copied.parameters, copied.optional) == (
        source.type, "n", 2, "d", {"k": "v"}, False)
    array = SchemaBuilder.array(Schema.STRING_SCHEMA).doc("a").build()
    assert copy_schema_basics(array).build() == array


def test_lru_cache():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # refreshes "a"
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2
    assert cache.get_or_compute("d", lambda key: key * 2) == "dd"


def test_checked_header():
    assert checked_header("h", 1, Schema.INT32_SCHEMA) == Header("h", 1, Schema.INT32_SCHEMA)
    assert checked_header("h", None, None) == Header("h", None, None)
    with pytest.raises(DataException, match=r"^A null value requires an optional schema but was Schema\{INT32\}$"):
        checked_header("h", None, Schema.INT32_SCHEMA)
    with pytest.raises(DataException, match=r"^The value x is not compatible with the schema Schema\{INT32\}$"):
        checked_header("h", "x", Schema.INT32_SCHEMA)
    struct_schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    checked_header("s", Struct(struct_schema).put("a", 1), struct_schema)


def test_java_split_drops_trailing_empty_strings():
    assert java_split("a:b", ":") == ["a", "b"]
    assert java_split("a:", ":") == ["a"]
    assert java_split(":a", ":") == ["", "a"]
    assert java_split("::", ":") == []
    assert java_split("", ":") == [""]
    assert java_split("a:b:", ":") == ["a", "b"]


# --- SimpleDateFormat (tables from a JDK 17 run, Locale.US, UTC) ---------------------------------

JAVA_FORMAT = [
    ('yyyyMMdd', 0, '19700101'),
    ('yyyyMMdd', 1483425001864, '20170103'),
    ('yyyyMMdd', 86401234, '19700102'),
    ('yyyyMMdd', -1, '19691231'),
    ('yyyyMMdd', 951782400000, '20000229'),
    ('yyyyMMdd', 4102444799999, '20991231'),
    ('yyyyMMdd', 1700000123456, '20231114'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 0, '1970-01-01T00:00:00.000Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 1483425001864, '2017-01-03T06:30:01.864Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 86401234, '1970-01-02T00:00:01.234Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", -1, '1969-12-31T23:59:59.999Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 951782400000, '2000-02-29T00:00:00.000Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 4102444799999, '2099-12-31T23:59:59.999Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 1700000123456, '2023-11-14T22:15:23.456Z'),
    ('yy-M-d H:m:s.S', 0, '70-1-1 0:0:0.0'),
    ('yy-M-d H:m:s.S', 1483425001864, '17-1-3 6:30:1.864'),
    ('yy-M-d H:m:s.S', 86401234, '70-1-2 0:0:1.234'),
    ('yy-M-d H:m:s.S', -1, '69-12-31 23:59:59.999'),
    ('yy-M-d H:m:s.S', 951782400000, '00-2-29 0:0:0.0'),
    ('yy-M-d H:m:s.S', 4102444799999, '99-12-31 23:59:59.999'),
    ('yy-M-d H:m:s.S', 1700000123456, '23-11-14 22:15:23.456'),
    ('EEE, d MMM yyyy HH:mm:ss Z', 0, 'Thu, 1 Jan 1970 00:00:00 +0000'),
    ('EEE, d MMM yyyy HH:mm:ss Z', 1483425001864, 'Tue, 3 Jan 2017 06:30:01 +0000'),
    ('EEE, d MMM yyyy HH:mm:ss Z', 86401234, 'Fri, 2 Jan 1970 00:00:01 +0000'),
    ('EEE, d MMM yyyy HH:mm:ss Z', -1, 'Wed, 31 Dec 1969 23:59:59 +0000'),
    ('EEE, d MMM yyyy HH:mm:ss Z', 951782400000, 'Tue, 29 Feb 2000 00:00:00 +0000'),
    ('EEE, d MMM yyyy HH:mm:ss Z', 4102444799999, 'Thu, 31 Dec 2099 23:59:59 +0000'),
    ('EEE, d MMM yyyy HH:mm:ss Z', 1700000123456, 'Tue, 14 Nov 2023 22:15:23 +0000'),
    ('EEEE MMMM dd yyyy hh:mm a', 0, 'Thursday January 01 1970 12:00 AM'),
    ('EEEE MMMM dd yyyy hh:mm a', 1483425001864, 'Tuesday January 03 2017 06:30 AM'),
    ('EEEE MMMM dd yyyy hh:mm a', 86401234, 'Friday January 02 1970 12:00 AM'),
    ('EEEE MMMM dd yyyy hh:mm a', -1, 'Wednesday December 31 1969 11:59 PM'),
    ('EEEE MMMM dd yyyy hh:mm a', 951782400000, 'Tuesday February 29 2000 12:00 AM'),
    ('EEEE MMMM dd yyyy hh:mm a', 4102444799999, 'Thursday December 31 2099 11:59 PM'),
    ('EEEE MMMM dd yyyy hh:mm a', 1700000123456, 'Tuesday November 14 2023 10:15 PM'),
    ("yyyy.MM.dd G 'at' HH:mm:ss z", 0, '1970.01.01 AD at 00:00:00 UTC'),
    ("yyyy.MM.dd G 'at' HH:mm:ss z", 1483425001864, '2017.01.03 AD at 06:30:01 UTC'),
    ("yyyy.MM.dd G 'at' HH:mm:ss z", 86401234, '1970.01.02 AD at 00:00:01 UTC'),
    ("yyyy.MM.dd G 'at' HH:mm:ss z", -1, '1969.12.31 AD at 23:59:59 UTC'),
    ("yyyy.MM.dd G 'at' HH:mm:ss z", 951782400000, '2000.02.29 AD at 00:00:00 UTC'),
    ("yyyy.MM.dd G 'at' HH:mm:ss z", 4102444799999, '2099.12.31 AD at 23:59:59 UTC'),
    ("yyyy.MM.dd G 'at' HH:mm:ss z", 1700000123456, '2023.11.14 AD at 22:15:23 UTC'),
    ('D F u k K', 0, '1 1 4 24 0'),
    ('D F u k K', 1483425001864, '3 1 2 6 6'),
    ('D F u k K', 86401234, '2 1 5 24 0'),
    ('D F u k K', -1, '365 5 3 23 11'),
    ('D F u k K', 951782400000, '60 5 2 24 0'),
    ('D F u k K', 4102444799999, '365 5 4 23 11'),
    ('D F u k K', 1700000123456, '318 2 2 22 10'),
    ('yyyyy.MMMMM.dd GGG hh:mm aaa', 0, '01970.January.01 AD 12:00 AM'),
    ('yyyyy.MMMMM.dd GGG hh:mm aaa', 1483425001864, '02017.January.03 AD 06:30 AM'),
    ('yyyyy.MMMMM.dd GGG hh:mm aaa', 86401234, '01970.January.02 AD 12:00 AM'),
    ('yyyyy.MMMMM.dd GGG hh:mm aaa', -1, '01969.December.31 AD 11:59 PM'),
    ('yyyyy.MMMMM.dd GGG hh:mm aaa', 951782400000, '02000.February.29 AD 12:00 AM'),
    ('yyyyy.MMMMM.dd GGG hh:mm aaa', 4102444799999, '02099.December.31 AD 11:59 PM'),
    ('yyyyy.MMMMM.dd GGG hh:mm aaa', 1700000123456, '02023.November.14 AD 10:15 PM'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 0, '1970-01-01T00:00:00.000Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 1483425001864, '2017-01-03T06:30:01.864Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 86401234, '1970-01-02T00:00:01.234Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", -1, '1969-12-31T23:59:59.999Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 951782400000, '2000-02-29T00:00:00.000Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 4102444799999, '2099-12-31T23:59:59.999Z'),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 1700000123456, '2023-11-14T22:15:23.456Z'),
    ('yyyy-MM-dd HH:mm:ssX', 0, '1970-01-01 00:00:00Z'),
    ('yyyy-MM-dd HH:mm:ssX', 1483425001864, '2017-01-03 06:30:01Z'),
    ('yyyy-MM-dd HH:mm:ssX', 86401234, '1970-01-02 00:00:01Z'),
    ('yyyy-MM-dd HH:mm:ssX', -1, '1969-12-31 23:59:59Z'),
    ('yyyy-MM-dd HH:mm:ssX', 951782400000, '2000-02-29 00:00:00Z'),
    ('yyyy-MM-dd HH:mm:ssX', 4102444799999, '2099-12-31 23:59:59Z'),
    ('yyyy-MM-dd HH:mm:ssX', 1700000123456, '2023-11-14 22:15:23Z'),
    ("''yyyy''", 0, "'1970'"),
    ("''yyyy''", 1483425001864, "'2017'"),
    ("''yyyy''", 86401234, "'1970'"),
    ("''yyyy''", -1, "'1969'"),
    ("''yyyy''", 951782400000, "'2000'"),
    ("''yyyy''", 4102444799999, "'2099'"),
    ("''yyyy''", 1700000123456, "'2023'"),
    ('zzzz SSSS', 0, 'Coordinated Universal Time 0000'),
    ('zzzz SSSS', 1483425001864, 'Coordinated Universal Time 0864'),
    ('zzzz SSSS', 86401234, 'Coordinated Universal Time 0234'),
    ('zzzz SSSS', -1, 'Coordinated Universal Time 0999'),
    ('zzzz SSSS', 951782400000, 'Coordinated Universal Time 0000'),
    ('zzzz SSSS', 4102444799999, 'Coordinated Universal Time 0999'),
    ('zzzz SSSS', 1700000123456, 'Coordinated Universal Time 0456'),
]
JAVA_PARSE = [
    ('yyyyMMdd', '20170103', 1483401600000),
    ('yyyy-MM-dd', '2020-02-30', 1583020800000),
    ('yyyy-MM-dd', '2020-13-01', 1609459200000),
    ('yyyy-MM-dd', '2020-01-01 trailing', 1577836800000),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", '2020-01-01T10:00:00.123+02:00', 1577865600123),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", '2020-01-01T10:00:00.123Z', 1577872800123),
    ('yyyy-MM-dd HH:mm:ss Z', '2020-01-01 10:00:00 -0500', 1577890800000),
    ('yyyy-MM-dd HH:mm:ss z', '2020-01-01 10:00:00 PST', 1577901600000),
    ('yyyy-MM-dd HH:mm:ss z', '2020-01-01 10:00:00 GMT+01:30', 1577867400000),
    ('dd MMM yyyy', '05 Feb 2021', 1612483200000),
    ('dd MMMM yyyy', '05 february 2021', 1612483200000),
    ('hh:mm a', '07:30 PM', 70200000),
    ('hh:mm a', '12:05 AM', 300000),
    ('yyyy-MM-dd', 'abc', None),
    ('yyyy-MM-dd', '2020/01/01', None),
    ('yyyyMMddHHmmss', '20200102030405', 1577934245000),
    ('yy-MM-dd', '99-01-01', 915148800000),
    ('yy-MM-dd', '05-01-01', 1104537600000),
    ('yyyy-MM-dd', '  2020-01-01', 1577836800000),
    ('yyyy MM dd HH mm ss SSS z', '1970 01 02 00 00 01 234 UTC', 86401234),
    ('yyyy-MM-dd HH:mm', '2020-01-01 25:61', 1577930460000),
    ('EEE, d MMM yyyy', 'Tue, 3 Jan 2017', 1483401600000),
    ('D yyyy', '40 2021', 1612828800000),
]
JAVA_BAD_PATTERNS = [
    ('bad-format', "Illegal pattern character 'b'"), ("yyyy-'MM", 'Unterminated quote'),
    ('XXXX', 'invalid ISO 8601 format: length=4'), ('yyyy-bb', "Illegal pattern character 'b'"),
    ('q', "Illegal pattern character 'q'"),
]


@pytest.mark.parametrize("pattern, millis, expected", JAVA_FORMAT)
def test_format_matches_java(pattern, millis, expected):
    assert JavaDateFormat(pattern).format_millis(millis) == expected


@pytest.mark.parametrize("pattern, text, expected", JAVA_PARSE)
def test_parse_matches_java(pattern, text, expected):
    if expected is None:
        with pytest.raises(ValueError):
            JavaDateFormat(pattern).parse_millis(text)
    else:
        assert JavaDateFormat(pattern).parse_millis(text) == expected


@pytest.mark.parametrize("pattern, message", JAVA_BAD_PATTERNS)
def test_bad_patterns_match_java(pattern, message):
    with pytest.raises(ValueError) as raised:
        JavaDateFormat(pattern)
    assert str(raised.value) == message


def test_week_based_letters_are_not_supported():
    # Java accepts Y, w and W (locale week rules); this implementation refuses them.
    for pattern in ("YYYY", "ww", "W"):
        with pytest.raises(UnsupportedPatternError):
            JavaDateFormat(pattern)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-62135596800000, max_value=253402300799999))
def test_iso_format_round_trip(millis):
    date_format = JavaDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")
    assert date_format.parse_millis(date_format.format_millis(millis)) == millis


# --- java.util.regex (tables from a JDK 17 run) -------------------------------------------------

SUBJECTS = [
    'orders-12', 'db.table', 'ab', 'abc', 'ac', 'a.bxyz', 'topic_x', 'TOPIC_x', 'xyz', 'xYz', 'abab', 'aa', 'aaa',
    'def', 'foo-bar', 'b', 'ABC', ']a]', 'aab', 'x', '  x', 'Ab1', 'AZ19', 'A', 'z', '\x01z', 'line\nbreak', 'ab\n',
]
JAVA_MATCHES = {
    '(.*)': [
        '\x01z', '  x', 'A', 'ABC', 'AZ19', 'Ab1', 'TOPIC_x', ']a]', 'a.bxyz', 'aa', 'aaa', 'aab', 'ab', 'abab', 'abc',
        'ac', 'b', 'db.table', 'def', 'foo-bar', 'orders-12', 'topic_x', 'x', 'xYz', 'xyz', 'z',
    ],
    'orders-(\\d+)': ['orders-12'],
    '(?<db>[^.]+)\\.(?<table>.+)': ['a.bxyz', 'db.table'],
    'a|ab': ['ab'],
    '(a)(b)?c': ['abc', 'ac'],
    '\\Qa.b\\E.*': ['a.bxyz'],
    '[\\w.-]+': [
        'A', 'ABC', 'AZ19', 'Ab1', 'TOPIC_x', 'a.bxyz', 'aa', 'aaa', 'aab', 'ab', 'abab', 'abc', 'ac', 'b', 'db.table',
        'def', 'foo-bar', 'orders-12', 'topic_x', 'x', 'xYz', 'xyz', 'z',
    ],
    '\\p{Alpha}+\\d*': [
        'A', 'ABC', 'AZ19', 'Ab1', 'aa', 'aaa', 'aab', 'ab', 'abab', 'abc', 'ac', 'b', 'def', 'x', 'xYz', 'xyz', 'z',
    ],
    '\\P{Digit}+': [
        '\x01z', '  x', 'A', 'ABC', 'TOPIC_x', ']a]', 'a.bxyz', 'aa', 'aaa', 'aab', 'ab', 'ab\n', 'abab', 'abc', 'ac',
        'b', 'db.table', 'def', 'foo-bar', 'line\nbreak', 'topic_x', 'x', 'xYz', 'xyz', 'z',
    ],
    '(?i)TOPIC_(.+)': ['TOPIC_x', 'topic_x'],
    'x(?i)Y(z)': ['xYz', 'xyz'],
    '(?:ab)+': ['ab', 'abab'],
    'a{2,3}': ['aa', 'aaa'],
    '[^a-c]+': ['\x01z', '  x', 'A', 'ABC', 'AZ19', 'TOPIC_x', 'def', 'orders-12', 'x', 'xYz', 'xyz', 'z'],
    '\\bfoo\\b.*': ['foo-bar'],
    '(a*)*b': ['aab', 'ab', 'b'],
    '\\x{41}\\x42\\u0043': ['ABC'],
    '(?<n>ab)\\k<n>': ['abab'],
    '[]a]+': [']a]', 'aa', 'aaa'],
    '[^]a]+': [
        '\x01z', '  x', 'A', 'ABC', 'AZ19', 'Ab1', 'TOPIC_x', 'b', 'def', 'orders-12', 'topic_x', 'x', 'xYz', 'xyz',
        'z',
    ],
    'a++b?': ['aa', 'aaa', 'aab', 'ab'],
    '(?>a|ab)c': ['ac'],
    '\\Aab\\z': ['ab'],
    'ab\\Z': ['ab'],
    '\\h*x': ['  x', 'x'],
    '[a-z&&[^b]]+': ['aa', 'aaa', 'ac', 'def', 'x', 'xyz', 'z'],
    '\\0101': ['A'],
    '\\cA?z': ['\x01z', 'z'],
    '[\\p{Upper}\\d]+': ['A', 'ABC', 'AZ19'],
    '(?s).+': [
        '\x01z', '  x', 'A', 'ABC', 'AZ19', 'Ab1', 'TOPIC_x', ']a]', 'a.bxyz', 'aa', 'aaa', 'aab', 'ab', 'ab\n', 'abab',
        'abc', 'ac', 'b', 'db.table', 'def', 'foo-bar', 'line\nbreak', 'orders-12', 'topic_x', 'x', 'xYz', 'xyz', 'z',
    ],
    '(?x) a b # comment': ['ab'],
}
JAVA_REPLACE_FIRST = [('a|ab', 'ab', '<a>b')]


@pytest.mark.parametrize("pattern", list(JAVA_MATCHES))
def test_matches_like_java(pattern):
    if pattern == "[a-z&&[^b]]+":
        # Valid Java; class intersection has no Python equivalent, so it is refused.
        with pytest.raises(ValueError, match="not supported"):
            compile_java_regex(pattern)
        return
    compiled = compile_java_regex(pattern)
    assert sorted(s for s in set(SUBJECTS) if compiled.fullmatch(s)) == JAVA_MATCHES[pattern]


@pytest.mark.parametrize("pattern, subject, expected", JAVA_REPLACE_FIRST)
def test_replace_first_like_java(pattern, subject, expected):
    compiled = compile_java_regex(pattern)
    assert JavaReplacement("<$0>", compiled).replace_first(compiled, subject) == expected
