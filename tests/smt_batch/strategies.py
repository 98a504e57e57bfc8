"""Hypothesis strategies: batches of schemaless JSON records and random SMT chain configs."""

from __future__ import annotations

from typing import Any, Sequence

from hypothesis import strategies as st

from tests.smt_batch.harness import KAFKA, encode, raw_batch

KEYS = ["a", "b", "id", "name", "ts", "amount", "a.b"]
SUBKEYS = ["p", "q", "b"]
TOPICS = ["orders", "orders-eu", "audit"]
HEADER_KEYS = ["h1", "h2"]
DATE_TEXT = ["2024-01-02", "2024-01-02 03:04:05", "1999-12-31T23:59:59Z", "12:30", "x"]

def _mostly(common: st.SearchStrategy, rare: st.SearchStrategy) -> st.SearchStrategy:
    return st.integers(0, 19).flatmap(lambda i: rare if i == 0 else common)


ints = st.one_of(st.integers(-1000, 1000), st.integers(1_600_000_000_000, 1_800_000_000_000),
                 _mostly(st.integers(-(2**53), 2**53), st.integers(-(2**63), 2**63 - 1)))
floats = _mostly(st.one_of(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64),
                           st.sampled_from([0.0, 1.0, -2.5, 0.1, 1e-7])),
                 st.sampled_from([1e20, 2.0**53, -0.0]))
texts = st.one_of(st.text(alphabet="abcXYZ 01é-", max_size=6), st.sampled_from(DATE_TEXT),
                  st.sampled_from(["true", "TRUE", "12", "-7", "1.5", "NaN"]))

KINDS = ["int", "float", "number", "bool", "str", "obj", "list_int", "list_str", "list_obj", "null"]


def scalar_of(kind: str) -> st.SearchStrategy:
    return {
        "int": ints, "float": floats,
        "number": st.one_of(st.integers(-1000, 1000), st.integers(-(2**53) + 1, 2**53 - 1), floats),
        "bool": st.booleans(), "str": texts, "null": st.none(),
    }[kind]


def value_of(kind: str, depth: int = 0) -> st.SearchStrategy:
    if kind in ("int", "float", "number", "bool", "str", "null"):
        return scalar_of(kind)
    if kind == "obj":
        if depth > 1:
            return st.fixed_dictionaries({}, optional={k: ints for k in SUBKEYS})
        return st.fixed_dictionaries({}, optional={
            "p": st.one_of(st.none(), ints), "q": st.one_of(st.none(), texts),
            "b": st.one_of(st.none(), value_of("obj", depth + 1)),
        })
    if kind == "list_int":
        return st.lists(st.one_of(st.integers(-1000, 1000), st.none()), max_size=3)
    if kind == "list_str":
        return st.lists(texts, max_size=3)
    if kind == "list_obj":
        return st.lists(value_of("obj", 2), max_size=2)
    raise AssertionError(kind)


@st.composite
def records(draw, max_size: int = 12) -> dict[str, Any]:
    """A raw batch of JSON objects sharing per-key kinds (mostly), with tombstones, nulls and absent keys."""
    kinds = {key: draw(st.sampled_from(KINDS)) for key in KEYS}
    if draw(st.integers(0, 9)) == 0:  # sometimes a key changes kind inside the batch
        clash = draw(st.sampled_from(KEYS))
        alternative = draw(st.sampled_from(KINDS))
    else:
        clash, alternative = None, None
    count = draw(st.integers(1, max_size))
    values, timestamps, headers, topics = [], [], [], []
    for _ in range(count):
        if draw(st.integers(0, 9)) == 0:
            values.append(None)
        else:
            record = {}
            for key in draw(st.permutations(KEYS)):
                if draw(st.integers(0, 3)) == 0:
                    continue  # absent
                kind = alternative if key == clash and draw(st.booleans()) else kinds[key]
                record[key] = draw(st.one_of(st.none(), value_of(kind))) if draw(st.integers(0, 5)) == 0 \
                    else draw(value_of(kind))
            values.append(encode(record))
        timestamps.append(None if draw(st.integers(0, 15)) == 0
                          else draw(st.integers(-10**12, 4 * 10**12)))
        headers.append([(k, b"v") for k in draw(st.lists(st.sampled_from(HEADER_KEYS), max_size=2))])
        topics.append(draw(st.sampled_from(TOPICS)))
    return raw_batch(values, timestamps=timestamps, headers=headers, topics=topics)


# --- SMT configs ------------------------------------------------------------------------------------

names = st.sampled_from(KEYS + ["new", "p"])
CAST_TYPES = ["int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string"]


def _insert(draw) -> dict[str, str]:
    config: dict[str, str] = {}
    for key in ("topic.field", "partition.field", "offset.field", "timestamp.field", "static.field"):
        if draw(st.booleans()):
            config[key] = draw(names) + draw(st.sampled_from(["", "?", "!"]))
    if not config:
        config["static.field"] = draw(names)
    if "static.field" in config:
        config["static.value"] = draw(st.sampled_from(["v", "", "12"]))
    return {"type": f"{KAFKA}.InsertField$Value", **config}


def _replace(draw) -> dict[str, str]:
    config = {"type": f"{KAFKA}.ReplaceField$Value"}
    if draw(st.booleans()):
        config["exclude"] = ",".join(draw(st.lists(names, max_size=2)))
    if draw(st.booleans()):
        config["include"] = ",".join(draw(st.lists(names, max_size=3)))
    renames = draw(st.lists(st.tuples(names, names), max_size=2))
    if renames:
        config["renames"] = ",".join(f"{a}:{b}" for a, b in renames)
    return config


def _mask(draw) -> dict[str, str]:
    config = {"type": f"{KAFKA}.MaskField$Value", "fields": ",".join(draw(st.lists(names, min_size=1, max_size=3)))}
    if draw(st.booleans()):
        config["replacement"] = draw(st.sampled_from(["0", "12", "1.5", "x", "-0", "1e3"]))
    return config


def _cast(draw) -> dict[str, str]:
    if draw(st.integers(0, 5)) == 0:
        spec = draw(st.sampled_from(CAST_TYPES))
    else:
        pairs = draw(st.lists(st.tuples(names, st.sampled_from(CAST_TYPES)), min_size=1, max_size=3))
        spec = ",".join(f"{a}:{b}" for a, b in pairs)
    return {"type": f"{KAFKA}.Cast$Value", "spec": spec}


def _timestamp_converter(draw) -> dict[str, str]:
    config = {"type": f"{KAFKA}.TimestampConverter$Value",
              "field": draw(st.sampled_from(["ts", "name", "a", "id", ""])),
              "target.type": draw(st.sampled_from(["string", "unix", "Date", "Time", "Timestamp"])),
              "format": draw(st.sampled_from(["yyyy-MM-dd", "yyyy-MM-dd HH:mm:ss", "HH:mm", "yyyyMMdd'T'HHmmss.SSS"])),
              }
    if draw(st.booleans()):
        config["unix.precision"] = draw(st.sampled_from(["seconds", "milliseconds", "microseconds", "nanoseconds"]))
    return config


def _flatten(draw) -> dict[str, str]:
    return {"type": f"{KAFKA}.Flatten$Value", "delimiter": draw(st.sampled_from([".", "_"]))}


def _hoist(draw) -> dict[str, str]:
    return {"type": f"{KAFKA}.HoistField$Value", "field": draw(names)}


def _extract(draw) -> dict[str, str]:
    if draw(st.booleans()):
        return {"type": f"{KAFKA}.ExtractField$Value", "field": draw(st.sampled_from(["a.p", "a.b.p", "b.q", "id"])),
                "field.syntax.version": "V2"}
    return {"type": f"{KAFKA}.ExtractField$Value", "field": draw(names)}


def _filter(draw) -> dict[str, str]:
    return {"type": f"{KAFKA}.Filter"}


def _regex_router(draw) -> dict[str, str]:
    regex, replacement = draw(st.sampled_from([("(.*)-eu", "$1"), ("orders", "sales"), (".*", "all-$0")]))
    return {"type": f"{KAFKA}.RegexRouter", "regex": regex, "replacement": replacement}


def _timestamp_router(draw) -> dict[str, str]:
    return {"type": f"{KAFKA}.TimestampRouter",
            "topic.format": draw(st.sampled_from(["${topic}-${timestamp}", "t_${timestamp}"])),
            "timestamp.format": draw(st.sampled_from(["yyyyMMdd", "yyyy-MM-dd HH", "yyyy"]))}


# Stages without a batch form: run record by record inside a batch chain (smt/batch/records.py).
def _copy_value(draw) -> dict[str, str]:
    return {"type": "org.apache.iceberg.connect.transforms.CopyValue",
            "source.field": draw(names), "target.field": draw(names)}


def _kafka_metadata(draw) -> dict[str, str]:
    config = {"type": "org.apache.iceberg.connect.transforms.KafkaMetadataTransform"}
    if draw(st.booleans()):
        config["nested"] = "true"
    return config


def _user_plugin(draw) -> dict[str, str]:
    return {"type": "tests.smt_iceberg.example_plugins:UppercaseField", "field": draw(names)}


def _value_to_key(draw) -> dict[str, str]:  # changes keys: its chains always run per record
    return {"type": f"{KAFKA}.ValueToKey", "fields": draw(names)}


STAGES = [_insert, _replace, _mask, _cast, _timestamp_converter, _flatten, _hoist, _extract, _filter,
          _regex_router, _timestamp_router]  # every one has a batch form
RECORD_STAGES = [_copy_value, _kafka_metadata, _user_plugin, _value_to_key]  # none has

PREDICATES = [
    {"type": f"{KAFKA}.predicates.TopicNameMatches", "pattern": "orders.*"},
    {"type": f"{KAFKA}.predicates.HasHeaderKey", "name": "h1"},
    {"type": f"{KAFKA}.predicates.RecordIsTombstone"},
]


@st.composite
def chains(draw, stages=STAGES, max_stages: int = 3, predicate_choices: Sequence[int] = range(len(PREDICATES))
           ) -> dict[str, str]:
    """A connector config fragment with ``transforms`` (and ``predicates``, drawn from ``predicate_choices``)."""
    config: dict[str, str] = {}
    aliases, predicates = [], []
    for index in range(draw(st.integers(1, max_stages))):
        alias = f"s{index}"
        aliases.append(alias)
        stage = draw(st.sampled_from(stages))(draw)
        use_predicate = stage["type"].endswith(".Filter") or draw(st.integers(0, 3)) == 0
        if use_predicate:
            predicate = draw(st.sampled_from(predicate_choices))
            name = f"p{predicate}"
            if name not in predicates:
                predicates.append(name)
                config.update({f"predicates.{name}.{k}": v for k, v in PREDICATES[predicate].items()})
            stage["predicate"] = name
            if draw(st.booleans()):
                stage["negate"] = "true"
        config.update({f"transforms.{alias}.{k}": v for k, v in stage.items()})
    config["transforms"] = ",".join(aliases)
    if predicates:
        config["predicates"] = ",".join(predicates)
    return config
