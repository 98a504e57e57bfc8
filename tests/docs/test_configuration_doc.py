"""docs/configuration.md documents every declared config key with its declared default.

Checked against the code:

* the Connect framework keys (``CONNECT_KEYS``) and the Iceberg sink keys
  (``ICEBERG_KEYS``): each has a row in its section's table, and the row's
  default is the declared one (or, for a key declared without a default, the
  effective default listed in ``EFFECTIVE_DEFAULTS``);
* every registered SMT and predicate (``smt.TRANSFORMS`` / ``smt.PREDICATES``,
  resolved to their classes): each ``CONFIG_DEF`` key has a row in the
  plugin's table with the declared default, and no row names an undeclared key;
  the generated block is what tests/docs/generate_config_tables.py renders now;
* the converters: every key a converter reads through the ``config_*`` helpers
  of ``converters.base`` (recorded while configuring each registered converter)
  is in one of its tables, with the default the code passes.

Defaults are compared as the doc spells them (``generate_config_tables.render_default``):
``required``, ``none``, or the config-string value in backticks.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from connector.config.connect_config import CONNECT_KEYS, DEFAULT_CONVERTER, DEFAULT_HEADER_CONVERTER
from connector.config.iceberg_config import ICEBERG_KEYS
from connector.kafka.client_config import connect_group_id
from tests.docs import generate_config_tables as gen

DOC = gen.DOC
CONNECT_SECTION = "Connector settings (Kafka Connect framework)"
ICEBERG_SECTION = "Iceberg sink settings"
PLUGIN_SECTION = "Converter, SMT and predicate settings (all keys and defaults)"

#: Keys declared without a default (None) whose doc states what applies instead.
EFFECTIVE_DEFAULTS = {
    "key.converter": f"worker's, else `{DEFAULT_CONVERTER}`",
    "value.converter": f"worker's, else `{DEFAULT_CONVERTER}`",
    "header.converter": f"worker's, else `{DEFAULT_HEADER_CONVERTER}`",
    "iceberg.connect.group-id": f"`{connect_group_id('<name>')}`",
    # connector.channel.coordinator commits to `commit_branch or "main"`.
    "iceberg.tables.default-commit-branch": "`main`",
}

#: Converter keys read with a None default whose doc states what applies instead.
CONVERTER_EFFECTIVE_DEFAULTS = {
    "converter.type": "set by the role",
    "key.serializer.encoding": "`converter.encoding`",
    "value.serializer.encoding": "`converter.encoding`",
    "key.deserializer.encoding": "`converter.encoding`",
    "value.deserializer.encoding": "`converter.encoding`",
}


# --- parsing the doc --------------------------------------------------------------------------


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def sections(text: str, level: int) -> dict[str, str]:
    """Heading text -> body (up to the next heading of ``level`` or higher) for headings of ``level``."""
    out: dict[str, str] = {}
    title, body = None, []
    for line in text.splitlines():
        heading = re.match(r"(#+) (.*)", line)
        if heading and len(heading.group(1)) <= level:
            if title is not None:
                out[title] = "\n".join(body)
            title, body = (heading.group(2).strip(), []) if len(heading.group(1)) == level else (None, [])
            continue
        body.append(line)
    if title is not None:
        out[title] = "\n".join(body)
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def table_rows(body: str) -> Iterator[list[str]]:
    """The cells of each data row of the markdown tables in ``body``."""
    for line in body.splitlines():
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        if cells and (cells[0].lower() in ("key", "flag", "option", "column")
                      or set("".join(cells)) <= set("-: ")):
            continue
        yield cells


def documented(body: str) -> dict[str, str]:
    """Key -> default cell, for the ``| key | default | meaning |`` tables of ``body``.

    A row may name several keys (`` `a`, `b` ``); its default applies to all of
    them, unless it lists one default per key (``none, `false` ``).
    """
    found: dict[str, str] = {}
    for cells in table_rows(body):
        if len(cells) < 2:
            continue
        keys = re.findall(r"`([^`]+)`", cells[0])
        defaults = [d.strip() for d in cells[1].split(", ")]
        if len(keys) < 2 or len(defaults) != len(keys):
            defaults = [cells[1]] * len(keys)
        for key, default in zip(keys, defaults):
            found.setdefault(key, default)
    return found


def plugin_sections(text: str) -> dict[str, str]:
    """The level-4 sections inside the converter/SMT/predicate section."""
    return sections(sections(text, 2)[PLUGIN_SECTION], 4)


def prose(body: str) -> str:
    return "\n".join(line for line in body.splitlines() if not line.startswith("|"))


# --- Connect framework and Iceberg keys ---------------------------------------------------------


def expected_default(key: Any) -> str:
    if key.default is None and not key.required and key.name in EFFECTIVE_DEFAULTS:
        return EFFECTIVE_DEFAULTS[key.name]
    return gen.render_default(key)


def test_effective_defaults_only_for_unset_keys():
    declared = {**CONNECT_KEYS, **ICEBERG_KEYS}
    wrong = [name for name in EFFECTIVE_DEFAULTS
             if name not in declared or declared[name].required or declared[name].default is not None]
    assert not wrong, f"EFFECTIVE_DEFAULTS names keys that are undeclared or have a default: {wrong}"


@pytest.mark.parametrize("section,key", [pytest.param(CONNECT_SECTION, k, id=k.name) for k in CONNECT_KEYS.values()]
                         + [pytest.param(ICEBERG_SECTION, k, id=k.name) for k in ICEBERG_KEYS.values()])
def test_declared_key_documented_with_default(section, key):
    rows = documented(sections(doc_text(), 2)[section])
    assert key.name in rows, f"{key.name} is not in the table of '## {section}' in {DOC.name}"
    assert rows[key.name] == expected_default(key), (
        f"{key.name}: {DOC.name} says default {rows[key.name]!r}, the code declares {expected_default(key)!r}")


# --- SMTs and predicates ------------------------------------------------------------------------


def _registered() -> list[tuple[str, str]]:
    import smt

    return [("transformation", n) for n in smt.TRANSFORMS] + [("predicate", n) for n in smt.PREDICATES]


def _plugin_doc(class_name: str) -> tuple[str, str] | None:
    for title, body in plugin_sections(doc_text()).items():
        if f"`{class_name}`" in prose(body):
            return title, body
    return None


@pytest.mark.parametrize("kind,class_name", [pytest.param(kind, name, id=name) for kind, name in _registered()])
def test_plugin_keys_documented_with_defaults(kind, class_name):
    import smt

    resolve = smt.transformation_class if kind == "transformation" else smt.predicate_class
    keys = gen.config_def(resolve(class_name)).config_keys
    found = _plugin_doc(class_name)
    assert found is not None, f"{class_name} has no section in {DOC.name} (run generate_config_tables.py --write)"
    title, body = found
    rows = documented(body)
    missing = [name for name in keys if name not in rows]
    assert not missing, f"{class_name}: keys {missing} are missing from the table under '#### {title}'"
    wrong = {name: (rows[name], gen.render_default(key)) for name, key in keys.items()
             if rows[name] != gen.render_default(key)}
    assert not wrong, f"{class_name}: documented vs declared defaults differ: {wrong}"
    extra = sorted(set(rows) - set(keys))
    assert not extra, f"{class_name}: '#### {title}' documents keys the CONFIG_DEF does not declare: {extra}"
    if not keys:
        assert "No settings." in body, f"{class_name}: declares no keys; its section should say 'No settings.'"


def test_generated_block_is_current():
    assert gen.current_block(doc_text()) == gen.render(), (
        "the SMT/predicate tables in docs/configuration.md are stale: "
        "run python tests/docs/generate_config_tables.py --write")


# --- converters ---------------------------------------------------------------------------------


_HELPERS = ("config_bool", "config_int", "config_str", "config_choice")
_REGISTRY_CONFIG = {"schema.registry.url": "http://localhost:9"}  # configuring does not connect


def _configure_every_role(class_name: str) -> None:
    """Configure the converter as key, value and (when it is one) header converter."""
    import converters
    from connector.api.plugins import resolve_class

    cls = resolve_class(class_name, converters.CONVERTERS, kind="converter")
    instances = []
    if callable(getattr(cls, "to_connect_data", None)):
        instances += [converters.load(class_name, _REGISTRY_CONFIG, is_key) for is_key in (False, True)]
    if callable(getattr(cls, "to_connect_header", None)):
        instances.append(converters.load_header_converter(class_name, _REGISTRY_CONFIG))
    for instance in instances:
        getattr(instance, "close", lambda: None)()


def _read_converter_keys(monkeypatch) -> dict[str, dict[str, Any]]:
    """Converter class name -> {key: default} for every key read through the ``config_*`` helpers."""
    import converters
    import converters.base as base

    for name in converters.CONVERTERS:
        _configure_every_role(name)  # imports every converter module before patching
    seen: dict[str, Any] = {}

    def recording(helper):
        def wrapper(config, key, default, *args, **kwargs):
            seen.setdefault(key, default)
            return helper(config, key, default, *args, **kwargs)
        return wrapper

    originals = {name: getattr(base, name) for name in _HELPERS}
    for module in [m for n, m in sys.modules.items() if n == "converters" or n.startswith("converters.")]:
        for name, original in originals.items():
            if getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, recording(original))
    result: dict[str, dict[str, Any]] = {}
    for name in converters.CONVERTERS:
        seen.clear()
        _configure_every_role(name)
        result[name] = dict(seen)
    return result


def _converter_rows(class_name: str) -> dict[str, str]:
    """Rows of every converter section whose heading or text names ``class_name`` (full or simple name)."""
    simple = class_name.rsplit(".", 1)[-1]
    rows: dict[str, str] = {}
    for title, body in plugin_sections(doc_text()).items():
        text = title + "\n" + prose(body)
        if f"`{class_name}`" in text or f"`{simple}`" in text:
            rows.update(documented(body))
    return rows


def _render_read_default(key: str, default: Any) -> str:
    if default is None and key in CONVERTER_EFFECTIVE_DEFAULTS:
        return CONVERTER_EFFECTIVE_DEFAULTS[key]
    if default is None:
        return "none"
    if isinstance(default, bool):
        return "`true`" if default else "`false`"
    return f"`{default}`" if str(default) else '`""`'


def test_converter_keys_documented_with_defaults(monkeypatch):
    problems = []
    for class_name, keys in _read_converter_keys(monkeypatch).items():
        rows = _converter_rows(class_name)
        for key, default in sorted(keys.items()):
            if key not in rows:
                problems.append(f"{class_name}: `{key}` (read with default {default!r}) is not documented")
            elif rows[key] != _render_read_default(key, default):
                problems.append(f"{class_name}: `{key}` documented default {rows[key]!r}, "
                                f"the code uses {_render_read_default(key, default)!r}")
    assert not problems, "\n".join(problems)


def test_doc_parser_sees_the_tables():
    """Guards the parsing above: it must find the rows it is meant to check."""
    text = doc_text()
    assert len(documented(sections(text, 2)[CONNECT_SECTION])) >= len(CONNECT_KEYS)
    assert len(documented(sections(text, 2)[ICEBERG_SECTION])) >= len(ICEBERG_KEYS)
    assert documented("| key | default | meaning |\n|---|---|---|\n| `a`, `b` | none, `false` | x |") == {
        "a": "none", "b": "`false`"}
    assert Path(gen.__file__).parent == Path(__file__).parent
