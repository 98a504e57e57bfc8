"""docs/configuration.md documents every declared config key with its declared default.

The key tables are generated from the ConfigDefs (:mod:`connector.config.docs`);
these tests fail when the doc is stale, and check through the doc's own text
(not the generator) that every key the connector, a converter, an SMT or a
predicate accepts has a row with its default, and every key prefix the
connector hands on is described.
"""

from __future__ import annotations

import re
from typing import Iterator

import pytest

from connector.config import docs
from connector.config.connect_config import CONNECT_CONFIG, PASSTHROUGH_PREFIXES
from connector.config.iceberg_config import ICEBERG_CONFIG, PREFIX_KEYS

CONNECT_SECTION = "Connector settings (Kafka Connect framework)"
ICEBERG_SECTION = "Iceberg sink settings"
PLUGIN_SECTION = "Converter, SMT and predicate settings (all keys and defaults)"


# --- reading the doc --------------------------------------------------------------------------


def doc_text() -> str:
    return docs.DOC.read_text(encoding="utf-8")


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


def table_rows(body: str) -> Iterator[list[str]]:
    """The cells of each data row of the markdown tables in ``body``."""
    for line in body.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if cells and (cells[0].lower() == "key" or set("".join(cells)) <= set("-: ")):
            continue
        yield cells


def documented(body: str) -> dict[str, str]:
    """Key -> default cell of the ``| key | default | meaning |`` rows naming one key each (the section's
    own table: subsections, such as the keys with no effect, have tables of other columns)."""
    own = re.split(r"^### ", body, maxsplit=1, flags=re.MULTILINE)[0]
    return {m.group(1): cells[1] for cells in table_rows(own)
            if (m := re.fullmatch(r"`([^`]+)`", cells[0]))}


def plugin_blocks(class_name: str) -> list[str]:
    """Bodies of the level-4 plugin sections that list ``class_name``."""
    blocks = sections(sections(doc_text(), 2)[PLUGIN_SECTION], 4).values()
    return [body for body in blocks if f"`{class_name}`" in body.split("|", 1)[0]]


# --- the tests --------------------------------------------------------------------------------


def test_generated_tables_are_current():
    assert docs.refresh(doc_text()) == doc_text(), (
        "the generated tables of docs/configuration.md are stale: run python -m connector.config.docs")


def test_check_mode_reports_a_stale_doc(tmp_path):
    stale = tmp_path / "configuration.md"
    stale.write_text(doc_text().replace("| `tasks.max` | `1` |", "| `tasks.max` | `2` |"), encoding="utf-8")
    assert docs.main(["--check", "--doc", str(stale)]) == 1
    assert docs.main(["--doc", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == doc_text()


@pytest.mark.parametrize("section,config", [(CONNECT_SECTION, CONNECT_CONFIG), (ICEBERG_SECTION, ICEBERG_CONFIG)],
                         ids=["connect", "iceberg"])
def test_connector_keys_documented_with_defaults(section, config):
    rows = documented(sections(doc_text(), 2)[section])
    expected = {name: docs.render_default(key) for name, key in config.config_keys.items()}
    assert {name: rows.get(name) for name in expected} == expected


@pytest.mark.parametrize("prefix", PASSTHROUGH_PREFIXES + PREFIX_KEYS)
def test_connector_key_prefixes_described(prefix):
    assert f"`{prefix}*`" in doc_text() or f"`{prefix}<" in doc_text(), f"{prefix}* is not in the doc"


@pytest.mark.parametrize("kind,class_name,config", [pytest.param(*p, id=p[1]) for p in docs.registered()])
def test_plugin_keys_documented_with_defaults(kind, class_name, config):
    bodies = plugin_blocks(class_name)
    assert bodies, f"{class_name} is not listed under any plugin heading of the doc"
    rows: dict[str, str] = {}
    for body in bodies:
        rows.update(documented(body))
    expected = {name: docs.render_default(key) for name, key in config.config_keys.items()}
    assert rows == expected, f"{class_name}: documented keys/defaults differ from its {kind}'s ConfigDef"
    if not expected:
        assert any("No settings." in body for body in bodies)


def test_doc_parser_sees_the_tables():
    """Guards the parsing above: it must find the rows it is meant to check."""
    text = doc_text()
    assert len(documented(sections(text, 2)[CONNECT_SECTION])) >= len(CONNECT_CONFIG.names())
    assert documented("| key | default | meaning |\n|---|---|---|\n| `a` | none | x \\| y |") == {"a": "none"}
