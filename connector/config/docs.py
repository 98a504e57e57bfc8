"""Generate the key tables of docs/configuration.md from the ConfigDef declarations.

The connector's framework keys (``CONNECT_CONFIG``), the Iceberg sink's keys
(``ICEBERG_CONFIG``), every registered converter's ``CONFIG_DEF`` and every
registered SMT's and predicate's ``config()`` become tables in generated
blocks of the doc, each between ``<!-- generated: <name> -->`` and
``<!-- end generated -->``; everything else in the doc is hand-written.

    python -m connector.config.docs            # rewrite the generated blocks
    python -m connector.config.docs --check    # exit 1 when the doc is stale

Plugins are grouped into documented blocks: keys that carry a ``group`` (the
Schema Registry keys, ``converter.type``) form one block for every plugin that
declares them; the other keys form one block per plugin title, which merges
the ``$Key``/``$Value`` variants and the Apache/Tabular names of the Iceberg
SMTs.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from connector.api.config_def import ConfigDef, ConfigKey
from connector.config.connect_config import CONNECT_CONFIG
from connector.config.iceberg_config import ICEBERG_CONFIG
from connector.config.icefloe_config import ICEFLOE_CONFIG

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
END = "<!-- end generated -->"

KAFKA_TRANSFORMS = "org.apache.kafka.connect.transforms."
KAFKA_PREDICATES = "org.apache.kafka.connect.transforms.predicates."
CONFLUENT = "io.confluent."

#: One-line meanings where an SMT's declared doc (Kafka's, often long) says too much or too little.
#: Plugin title → key → meaning; the keys under "*" apply to every plugin. The default
#: column always comes from the declaration, never from here.
MEANINGS: dict[str, dict[str, str]] = {
    "*": {
        "replace.null.with.default": "a null field that has a schema default reads as the default; "
                                     "`false` keeps the null",
    },
    "Cast": {
        "spec": "`field:type,...` casts fields of a struct/map; a single `type` casts the whole value "
                "(`int8` ... `int64`, `float32`, `float64`, `boolean`, `string`; bytes only to `string`)",
    },
    "ExtractField": {
        "field": "field to extract (a dotted path with `field.syntax.version=V2`)",
        "field.syntax.version": "`V1`: top-level field names only; `V2`: dotted paths into nested fields, "
                                "backticks around names that contain dots (case-insensitive)",
    },
    "Flatten": {
        "delimiter": "put between a parent's and a child's field name in the flattened names",
    },
    "HeaderFrom": {
        "fields": "fields of the key/value to copy or move into headers",
        "headers": "header names, in the order of `fields`",
        "operation": "`move` removes the fields from the key/value, `copy` keeps them",
    },
    "HoistField": {
        "field": "name of the single field that wraps the key/value",
    },
    "InsertField": {
        "topic.field": "field for the topic; suffix `!` makes it required, `?` optional (default)",
        "partition.field": "field for the partition (`!`/`?` suffix as above)",
        "offset.field": "field for the offset (`!`/`?` suffix as above)",
        "timestamp.field": "field for the record timestamp (`!`/`?` suffix as above)",
        "static.field": "field for `static.value` (`!`/`?` suffix as above)",
        "static.value": "the constant put in `static.field`",
    },
    "InsertHeader": {
        "header": "header key to add",
        "value.literal": "header value added to every record (typed as Connect's `Values` parses text)",
    },
    "MaskField": {
        "fields": "fields to mask",
        "replacement": "value put in masked fields (numbers and non-empty strings only); "
                       "unset: the type's empty value (`0`, `\"\"`, `false`, ...)",
    },
    "RegexRouter": {
        "regex": "Java regex that must match the whole topic name",
        "replacement": "new topic name; `$1`, `${name}` refer to the regex's groups",
    },
    "ReplaceField": {
        "exclude": "fields to drop (wins over `include`)",
        "blacklist": "deprecated alias of `exclude`",
        "include": "fields to keep (empty: all)",
        "whitelist": "deprecated alias of `include`",
        "renames": "`old:new,...` field renames",
    },
    "SetSchemaMetadata": {
        "schema.name": "schema name to set (unset: unchanged)",
        "schema.version": "schema version to set (unset: unchanged)",
    },
    "TimestampConverter": {
        "field": "field holding the timestamp; empty: the whole key/value",
        "target.type": "output type: `string`, `unix`, `Date`, `Time` or `Timestamp`",
        "format": "`SimpleDateFormat` pattern (UTC) for `string` output and for string input",
        "unix.precision": "precision of `unix` output and of integer input: `seconds`, "
                          "`milliseconds`, `microseconds` or `nanoseconds`",
    },
    "TimestampRouter": {
        "topic.format": "new topic name; `${topic}` and `${timestamp}` are replaced",
        "timestamp.format": "`SimpleDateFormat` pattern (UTC) of `${timestamp}`",
    },
    "ValueToKey": {
        "fields": "value fields that make up the new key",
    },
    "DropHeaders": {
        "headers": "header keys to remove",
    },
    "HasHeaderKey": {
        "name": "true for records with a header of this key",
    },
    "TopicNameMatches": {
        "pattern": "true for records whose whole topic name matches this Java regex",
    },
    "CopyValue": {
        "source.field": "top-level field to copy",
        "target.field": "new top-level field that receives the copy",
    },
    "DebeziumTransform": {
        "cdc.target.pattern": "value of `_cdc.target`, `{db}` and `{table}` replaced; unset: `<db>.<table>`",
    },
    "JsonToMapTransform": {
        "json.root": "`true`: the whole JSON object becomes one `payload` map field; "
                     "`false`: one field per top-level key",
    },
    "KafkaMetadataTransform": {
        "field_name": "prefix of the flat metadata fields, or the nested field's name",
        "nested": "`true`: one struct field holding the metadata instead of flat fields",
        "external_field": "`name,value`: a constant string field added with the metadata",
    },
    "MongoDebeziumTransform": {
        "array_handling_mode": "`array` (also when unset or unknown): BSON arrays as arrays; "
                               "`document`: structs with fields `_0`, `_1`, ...",
    },
}


# --- cells ------------------------------------------------------------------------------------


def render_default(key: ConfigKey) -> str:
    """The default column: ``required`` (no default), ``none`` (null), else the config-string value.

    ``true``/``false``, lists comma-separated, ``""`` for an empty string or list; in backticks.
    """
    if key.required:
        return "required"
    value = key.default
    if value is None:
        return "none"
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
    else:
        text = str(value)
    return "`" + text + "`" if text else '`""`'


def _clean(doc: str) -> str:
    text = re.sub(r"<br\s*/?>", " ", doc or "")
    text = re.sub(r"<code>(.*?)</code>", r"`\1`", text)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return " ".join(text.split())


def _first_sentence(doc: str) -> str:
    text = _clean(doc)
    match = re.match(r"(.+?[.])(\s|$)", text)
    sentence = (match.group(1) if match else text).rstrip(".")
    return sentence[:1].lower() + sentence[1:] if sentence[:2] != sentence[:2].upper() else sentence


def _choices(validator: Any) -> str:
    text = str(validator) if validator is not None else ""
    match = re.fullmatch(r"(\(case insensitive\) )?\[([^\]]*)\]", text)
    if not match or "..." in text:
        return ""
    options = ", ".join(f"`{o.strip()}`" for o in match.group(2).split(","))
    return f" (one of {options}{', any case' if match.group(1) else ''})"


def plugin_meaning(title: str, key: ConfigKey) -> str:
    """A plugin key's meaning: an override from MEANINGS, else the doc's first sentence and the choices."""
    text = MEANINGS.get(title, {}).get(key.name) or MEANINGS["*"].get(key.name)
    return text if text is not None else _first_sentence(key.doc) + _choices(key.validator)


def table(keys: Iterable[ConfigKey], meaning: Callable[[ConfigKey], str]) -> list[str]:
    def escaped(key: ConfigKey) -> str:
        return meaning(key).replace("|", "\\|")

    rows = [f"| `{k.name}` | {render_default(k)} | {escaped(k)} |" for k in keys]
    return ["| key | default | meaning |", "|---|---|---|", *rows]


# --- plugins ----------------------------------------------------------------------------------


@dataclass
class Block:
    """One documented table: a group's keys, or one plugin's own keys."""

    section: str
    title: str
    keys: list[ConfigKey]
    class_names: list[str] = field(default_factory=list)

    def rows(self) -> list[str]:
        return table(self.keys, lambda k: plugin_meaning(self.title, k))


SECTIONS = ("Kafka converters", "Confluent Schema Registry converters", "Kafka SMTs", "Predicates",
            "Iceberg SMTs")


def _title(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1].split("$", 1)[0]


def _section(class_name: str, kind: str) -> str:
    if kind == "converter":
        return SECTIONS[1] if class_name.startswith(CONFLUENT) else SECTIONS[0]
    if class_name.startswith(KAFKA_PREDICATES):
        return "Predicates"
    return "Kafka SMTs" if class_name.startswith(KAFKA_TRANSFORMS) else "Iceberg SMTs"


def _class_config_def(cls: Any) -> ConfigDef:
    """A plugin class's ``CONFIG_DEF`` attribute (plugin classes are duck-typed, hence ``Any``)."""
    return cls.CONFIG_DEF


def smt_config_def(cls: type) -> ConfigDef:
    """The ConfigDef an SMT or predicate class parses its config with (``config()`` of an instance)."""
    try:
        return cls().config()
    except TypeError:  # a plugin whose constructor needs arguments: fall back to the class attribute
        return _class_config_def(cls)


def registered() -> list[tuple[str, str, ConfigDef]]:
    """(kind, class name, ConfigDef) of every registered converter, transformation and predicate."""
    import converters
    import smt
    from connector.api.plugins import resolve_class

    found = [("converter", name, _class_config_def(resolve_class(name, converters.CONVERTERS, kind="converter")))
             for name in converters.CONVERTERS]
    found += [("transformation", name, smt_config_def(smt.transformation_class(name))) for name in smt.TRANSFORMS]
    found += [("predicate", name, smt_config_def(smt.predicate_class(name))) for name in smt.PREDICATES]
    return found


def blocks() -> list[Block]:
    """The documented blocks, in section and title order; a block shared by plugins lists them all."""
    by_id: dict[tuple[str, str], Block] = {}
    for kind, class_name, config_def in registered():
        section = _section(class_name, kind)
        keys = list(config_def.config_keys.values())
        parts: dict[str, list[ConfigKey]] = {_title(class_name): []} if not keys else {}
        for key in keys:
            parts.setdefault(key.group or _title(class_name), []).append(key)
        for title, own in parts.items():
            block = by_id.setdefault((section, title), Block(section, title, own))
            if block.rows() != Block(section, title, own).rows():
                raise AssertionError(f"{class_name} declares other '{title}' keys than {block.class_names[0]}")
            block.class_names.append(class_name)
    return sorted(by_id.values(), key=lambda b: (SECTIONS.index(b.section), b.title.lower()))


# --- the generated blocks ---------------------------------------------------------------------


def _plugin_tables() -> list[str]:
    out: list[str] = []
    section = None
    for block in blocks():
        if block.section != section:
            section = block.section
            out += [f"### {section}", ""]
        out += [f"#### {block.title}", "", ", ".join(f"`{n}`" for n in block.class_names), ""]
        out += [*block.rows(), ""] if block.keys else ["No settings.", ""]
    return out[:-1]


def _key_table(config_def: ConfigDef) -> Callable[[], list[str]]:
    """The table of one of the connector's own ConfigDefs: each key with its whole doc."""
    return lambda: table(config_def.config_keys.values(), lambda k: k.doc)


GENERATORS: dict[str, Callable[[], list[str]]] = {
    "connect-config": _key_table(CONNECT_CONFIG),
    "iceberg-config": _key_table(ICEBERG_CONFIG),
    "icefloe-config": _key_table(ICEFLOE_CONFIG),
    "plugin-config": _plugin_tables,
}


def begin_marker(name: str) -> str:
    return f"<!-- generated: {name} -->"


def render(name: str) -> str:
    """The generated block ``name``, markers included."""
    note = "<!-- Generated from the ConfigDefs by python -m connector.config.docs; do not edit by hand. -->"
    return "\n".join([begin_marker(name), note, "", *GENERATORS[name](), "", END])


def refresh(text: str) -> str:
    """``text`` with every generated block rendered anew."""
    for name in GENERATORS:
        start = text.index(begin_marker(name))
        end = text.index(END, start) + len(END)
        text = text[:start] + render(name) + text[end:]
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the doc is stale, change nothing")
    parser.add_argument("--doc", type=Path, default=DOC, help=f"the doc to refresh (default {DOC})")
    args = parser.parse_args(argv)
    text = args.doc.read_text(encoding="utf-8")
    updated = refresh(text)
    if updated == text:
        return 0
    if args.check:
        print(f"{args.doc} is stale: run python -m connector.config.docs", file=sys.stderr)
        return 1
    args.doc.write_text(updated, encoding="utf-8")
    print(f"updated {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
