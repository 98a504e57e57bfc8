"""Whether a table name can name an Iceberg table in the configured catalog, and if not, why.

Checked where the config is checked (``iceberg.tables``, the tables of
``iceberg.table.<name>.*`` keys) and, for dynamic routing, on every route value
at run time. A name is ``<namespace>.<table>`` (the namespace may have several
levels: ``a.b.events``), split at its dots as the Java sink's
``TableIdentifier.parse`` splits it. Iceberg's own rules are loose, but the
catalogs are not: the SQL and REST catalogs' warehouses and most object stores
turn a name into a folder, so ``/`` makes nested folders and spaces or ``!``
end up in paths; the Hive Metastore and Glue take letters, digits and ``_``
only. One rule for every catalog (letters, digits, ``_`` and ``-``) keeps a
config portable; Hive and Glue also refuse ``-``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: One level of a name: letters (any script), digits, ``_`` and ``-``.
_PART = re.compile(r"[\w-]+")
_HIVE_PART = re.compile(r"\w+")
#: Catalogs backed by the Hive Metastore's (or Glue's) naming rules.
_STRICT_CATALOGS = {"hive": "the Hive Metastore", "glue": "AWS Glue"}


def table_name_problem(name: str, catalog_properties: Mapping[str, str] | None = None) -> str | None:
    """Why ``name`` cannot name a table (one phrase), or None when it can.

    ``catalog_properties`` are the ``iceberg.catalog.*`` keys without their prefix (they say which catalog).
    """
    if not name or not name.strip():
        return "a table name is empty"
    if name != name.strip():
        return "it starts or ends with whitespace"
    parts = name.split(".")
    if len(parts) < 2:
        return "it has no namespace: write `<namespace>.<table>`, e.g. `default." + name + "`"
    if any(not part for part in parts):
        return "it has an empty part (two dots in a row, or a leading or trailing dot)"
    strict = _strict_catalog(catalog_properties or {})
    for part in parts:
        if strict is not None and not _HIVE_PART.fullmatch(part):
            return f"`{part}`: {strict} accepts letters, digits and `_` only in names"
        if not _PART.fullmatch(part):
            bad = "".join(dict.fromkeys(c for c in part if not _PART.fullmatch(c)))
            return (f"`{part}` holds {_shown(bad)}: names may hold letters, digits, `_` and `-` "
                    "(the catalog turns them into paths)")
    return None


def _strict_catalog(props: Mapping[str, str]) -> str | None:
    declared = (props.get("type") or "").strip().lower()
    impl = props.get("catalog-impl") or ""
    if not declared and impl.endswith((".HiveCatalog", ".GlueCatalog")):
        declared = "hive" if impl.endswith("HiveCatalog") else "glue"
    if not declared and not impl:
        declared = "hive"  # the Java sink's default catalog type
    return _STRICT_CATALOGS.get(declared)


def _shown(characters: str) -> str:
    names = {" ": "a space", "\t": "a tab", "/": "`/`", "\\": "`\\`"}
    return ", ".join(names.get(c, f"`{c}`") for c in characters)
