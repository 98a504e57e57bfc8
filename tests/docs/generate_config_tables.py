"""Generate the SMT / predicate settings tables of docs/configuration.md from the ``CONFIG_DEF``s.

Every transformation in ``smt.TRANSFORMS`` and predicate in ``smt.PREDICATES``
is resolved to its Python class; its declared keys (name, default, validator,
doc) become one table per plugin. ``$Key``/``$Value`` variants and the
Apache/Tabular names of the Iceberg SMTs share one table.

    python tests/docs/generate_config_tables.py            # print the block
    python tests/docs/generate_config_tables.py --write    # refresh docs/configuration.md
    python tests/docs/generate_config_tables.py --check    # exit 1 if the doc is stale

The block sits between ``<!-- generated: smt-config -->`` and
``<!-- end generated -->``; everything else in the doc is hand-written.
``render_default`` is shared with tests/docs/test_configuration_doc.py, so the
doc's default column and the test's expectation are spelled the same way.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
BEGIN = "<!-- generated: smt-config -->"
END = "<!-- end generated -->"

KAFKA_TRANSFORMS = "org.apache.kafka.connect.transforms."
KAFKA_PREDICATES = "org.apache.kafka.connect.transforms.predicates."

#: One-line meanings where the declared doc's first sentence is too long or too vague.
#: Keyed by (plugin title, key); ("*", key) applies to every plugin. The default
#: column always comes from the declaration, never from here.
MEANINGS: dict[tuple[str, str], str] = {
    ("*", "replace.null.with.default"): "a null field that has a schema default reads as the default; "
                                        "`false` keeps the null",
    ("Cast", "spec"): "`field:type,...` casts fields of a struct/map; a single `type` casts the whole value "
                      "(`int8` ... `int64`, `float32`, `float64`, `boolean`, `string`; bytes only to `string`)",
    ("ExtractField", "field"): "field to extract (a dotted path with `field.syntax.version=V2`)",
    ("ExtractField", "field.syntax.version"): "`V1`: top-level field names only; `V2`: dotted paths into "
                                              "nested fields, backticks around names that contain dots "
                                              "(case-insensitive)",
    ("Flatten", "delimiter"): "put between a parent's and a child's field name in the flattened names",
    ("HeaderFrom", "fields"): "fields of the key/value to copy or move into headers",
    ("HeaderFrom", "headers"): "header names, in the order of `fields`",
    ("HeaderFrom", "operation"): "`move` removes the fields from the key/value, `copy` keeps them",
    ("HoistField", "field"): "name of the single field that wraps the key/value",
    ("InsertField", "topic.field"): "field for the topic; suffix `!` makes it required, `?` optional (default)",
    ("InsertField", "partition.field"): "field for the partition (`!`/`?` suffix as above)",
    ("InsertField", "offset.field"): "field for the offset (`!`/`?` suffix as above)",
    ("InsertField", "timestamp.field"): "field for the record timestamp (`!`/`?` suffix as above)",
    ("InsertField", "static.field"): "field for `static.value` (`!`/`?` suffix as above)",
    ("InsertField", "static.value"): "the constant put in `static.field`",
    ("InsertHeader", "header"): "header key to add",
    ("InsertHeader", "value.literal"): "header value added to every record (typed as Connect's `Values` "
                                       "parses text)",
    ("MaskField", "fields"): "fields to mask",
    ("MaskField", "replacement"): "value put in masked fields (numbers and non-empty strings only); "
                                  "unset: the type's empty value (`0`, `\"\"`, `false`, ...)",
    ("RegexRouter", "regex"): "Java regex that must match the whole topic name",
    ("RegexRouter", "replacement"): "new topic name; `$1`, `${name}` refer to the regex's groups",
    ("ReplaceField", "exclude"): "fields to drop (wins over `include`)",
    ("ReplaceField", "blacklist"): "deprecated alias of `exclude`",
    ("ReplaceField", "include"): "fields to keep (empty: all)",
    ("ReplaceField", "whitelist"): "deprecated alias of `include`",
    ("ReplaceField", "renames"): "`old:new,...` field renames",
    ("SetSchemaMetadata", "schema.name"): "schema name to set (unset: unchanged)",
    ("SetSchemaMetadata", "schema.version"): "schema version to set (unset: unchanged)",
    ("TimestampConverter", "field"): "field holding the timestamp; empty: the whole key/value",
    ("TimestampConverter", "target.type"): "output type: `string`, `unix`, `Date`, `Time` or `Timestamp`",
    ("TimestampConverter", "format"): "`SimpleDateFormat` pattern (UTC) for `string` output and for string input",
    ("TimestampConverter", "unix.precision"): "precision of `unix` output and of integer input: `seconds`, "
                                              "`milliseconds`, `microseconds` or `nanoseconds`",
    ("TimestampRouter", "topic.format"): "new topic name; `${topic}` and `${timestamp}` are replaced",
    ("TimestampRouter", "timestamp.format"): "`SimpleDateFormat` pattern (UTC) of `${timestamp}`",
    ("ValueToKey", "fields"): "value fields that make up the new key",
    ("DropHeaders", "headers"): "header keys to remove",
    ("HasHeaderKey", "name"): "true for records with a header of this key",
    ("TopicNameMatches", "pattern"): "true for records whose whole topic name matches this Java regex",
    ("CopyValue", "source.field"): "top-level field to copy",
    ("CopyValue", "target.field"): "new top-level field that receives the copy",
    ("DebeziumTransform", "cdc.target.pattern"): "value of `_cdc.target`, `{db}` and `{table}` replaced; "
                                                 "unset: `<db>.<table>`",
    ("JsonToMapTransform", "json.root"): "`true`: the whole JSON object becomes one `payload` map field; "
                                         "`false`: one field per top-level key",
    ("KafkaMetadataTransform", "field_name"): "prefix of the flat metadata fields, or the nested field's name",
    ("KafkaMetadataTransform", "nested"): "`true`: one struct field holding the metadata instead of flat fields",
    ("KafkaMetadataTransform", "external_field"): "`name,value`: a constant string field added with the metadata",
    ("MongoDebeziumTransform", "array_handling_mode"): "`array` (also when unset or unknown): BSON arrays as "
                                                       "arrays; `document`: structs with fields `_0`, `_1`, ...",
}


# --- default column ---------------------------------------------------------------------------


def render_default(key: Any) -> str:
    """The default column for a declared key (``smt.base.ConfigKey`` or ``connector.config.definitions.ConfigKey``).

    ``required`` (no default), ``none`` (null), otherwise the value in backticks
    as a config string: ``true``/``false``, lists comma-separated, ``""`` for
    an empty string or list.
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


# --- plugins ----------------------------------------------------------------------------------


@dataclass
class Plugin:
    title: str
    section: str
    class_names: list[str]
    keys: list[Any]  # ConfigKey, in declaration order


def config_def(cls: type):
    """The ConfigDef a plugin class parses its config with (``config()`` of an instance)."""
    try:
        return cls().config()
    except Exception:  # noqa: BLE001 - a plugin that needs arguments: fall back to the class attribute
        return cls.CONFIG_DEF


def _title(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1].split("$", 1)[0]


def _section(class_name: str) -> str:
    if class_name.startswith(KAFKA_PREDICATES):
        return "Predicates"
    if class_name.startswith(KAFKA_TRANSFORMS):
        return "Kafka SMTs"
    return "Iceberg SMTs"


SECTIONS = ("Kafka SMTs", "Predicates", "Iceberg SMTs")


def plugins() -> list[Plugin]:
    """Every registered SMT and predicate, grouped by title (``$Key``/``$Value``, Apache/Tabular names)."""
    import smt

    grouped: dict[tuple[str, str], Plugin] = {}
    for registry, resolve in ((smt.TRANSFORMS, smt.transformation_class), (smt.PREDICATES, smt.predicate_class)):
        for class_name in registry:
            keys = list(config_def(resolve(class_name)).config_keys.values())
            ident = (_section(class_name), _title(class_name))
            plugin = grouped.get(ident)
            if plugin is None:
                grouped[ident] = Plugin(ident[1], ident[0], [class_name], keys)
                continue
            if _rows(plugin) != _rows(Plugin(plugin.title, plugin.section, [], keys)):
                raise AssertionError(f"{class_name} declares other keys than {plugin.class_names[0]}")
            plugin.class_names.append(class_name)
    return sorted(grouped.values(), key=lambda p: (SECTIONS.index(p.section), p.title.lower()))


# --- rendering --------------------------------------------------------------------------------


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


def meaning(title: str, key: Any) -> str:
    text = MEANINGS.get((title, key.name)) or MEANINGS.get(("*", key.name))
    if text is None:
        text = _first_sentence(key.doc) + _choices(key.validator)
    return text.replace("|", "\\|")


def _rows(plugin: Plugin) -> list[str]:
    return [f"| `{k.name}` | {render_default(k)} | {meaning(plugin.title, k)} |" for k in plugin.keys]


def render(all_plugins: Iterable[Plugin] | None = None) -> str:
    """The generated block, markers included."""
    all_plugins = list(plugins() if all_plugins is None else all_plugins)
    out = [BEGIN,
           "<!-- Generated from the CONFIG_DEFs by tests/docs/generate_config_tables.py --write; "
           "do not edit by hand. -->",
           ""]
    section = None
    for plugin in all_plugins:
        if plugin.section != section:
            section = plugin.section
            out += [f"### {section}", ""]
        out += [f"#### {plugin.title}", "", ", ".join(f"`{n}`" for n in plugin.class_names), ""]
        if plugin.keys:
            out += ["| key | default | meaning |", "|---|---|---|", *_rows(plugin), ""]
        else:
            out += ["No settings.", ""]
    out.append(END)
    return "\n".join(out)


def current_block(text: str) -> str:
    """The generated block as it stands in ``text`` (markers included)."""
    start = text.index(BEGIN)
    end = text.index(END, start) + len(END)
    return text[start:end]


def refresh(text: str) -> str:
    block = current_block(text)
    return text.replace(block, render(), 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="refresh the block in docs/configuration.md")
    mode.add_argument("--check", action="store_true", help="exit 1 when the block in the doc is stale")
    args = parser.parse_args(argv)
    if not (args.write or args.check):
        print(render())
        return 0
    text = DOC.read_text(encoding="utf-8")
    updated = refresh(text)
    if args.check:
        if updated != text:
            print(f"{DOC} is stale: run python tests/docs/generate_config_tables.py --write", file=sys.stderr)
            return 1
        return 0
    if updated != text:
        DOC.write_text(updated, encoding="utf-8")
        print(f"updated {DOC}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.exit(main())
