"""Old ``*.metadata.json`` files: deleted after a commit by the table's own rules, as Iceberg's Java writers do.

Every commit writes a new metadata file and appends the previous one to the
table's metadata log, which keeps the last ``write.metadata.previous-versions-max``
(100) entries. When ``write.metadata.delete-after-commit.enabled`` (false) is
true, Java's writers (``CatalogUtil.deleteRemovedMetadataFiles``) delete, after
each commit, exactly the files the log named before the commit and no longer
names after it; nothing else. pyiceberg calls the catalog's
``_delete_old_metadata`` hook after each commit for the same purpose, and
:func:`install` puts this module's rule there, on every catalog icefloe loads:

* a file is deleted only when the log before the commit named it as a previous
  version and the log after the commit does not; a file the log never named
  (another writer's, one a catalog keeps for itself) is never touched, and an
  empty log (as some REST catalogs return) deletes nothing;
* the table property decides; a table without it follows
  ``icefloe.maintenance.metadata.delete-old`` (false, Iceberg's default);
* with a REST catalog, which writes the metadata files and owns them, icefloe
  deletes none (Java's REST client does not either) unless
  ``icefloe.maintenance.metadata.delete-on-rest`` is true.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyiceberg.catalog import Catalog
from pyiceberg.io import FileIO
from pyiceberg.table.metadata import TableMetadata

log = logging.getLogger(__name__)

DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"


def removed_from_log(base: TableMetadata, new: TableMetadata) -> set[str]:
    """The metadata files ``base``'s log names as previous versions and ``new``'s log no longer does."""
    kept = {entry.metadata_file for entry in new.metadata_log}
    return {entry.metadata_file for entry in base.metadata_log} - kept


@dataclass(frozen=True)
class MetadataCleanup:
    """The rule of one connector: ``delete_old`` for tables without the property; ``rest``: the catalog is
    REST; ``delete_on_rest``: the user asked icefloe to delete on a REST catalog all the same."""

    delete_old: bool = False
    rest: bool = False
    delete_on_rest: bool = False

    def applies(self, metadata: TableMetadata) -> bool:
        """Whether old metadata files of a table with ``metadata`` are deleted after its commits."""
        if self.rest and not self.delete_on_rest:
            return False
        value = metadata.properties.get(DELETE_AFTER_COMMIT)
        return self.delete_old if value is None else value.strip().lower() == "true"

    def after_commit(self, io: FileIO, base: TableMetadata, new: TableMetadata) -> None:
        """pyiceberg's hook after a commit from ``base`` to ``new``."""
        if not self.applies(new):
            return
        for path in sorted(removed_from_log(base, new)):
            try:
                io.delete(path)
            except FileNotFoundError:
                pass  # another writer's cleanup got there first
            except Exception as exc:  # noqa: BLE001 - a file left behind must not fail a commit that landed
                log.warning("Could not delete old metadata file %s: %s", path, exc)


def install(catalog: Catalog, cleanup: MetadataCleanup) -> Catalog:
    """``catalog`` with ``cleanup``'s rule run after every commit through it."""
    # pyiceberg calls the hook as self.catalog._delete_old_metadata(io, base, metadata): an instance attribute wins
    catalog._delete_old_metadata = cleanup.after_commit  # type: ignore[method-assign, assignment]
    return catalog
