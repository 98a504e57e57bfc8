"""The files a branch head holds: its live data files and delete files, with their data sequence numbers.

One place for the rule every reader of a head's files follows (compaction,
the row delta's checks, the rebuilding of a key index): an entry is live when
its manifest entry is not DELETED, data and delete files come from manifests
of the matching content, and a position delete file applies to a data file
when it references that file and its data sequence number is at least the
data file's (Iceberg v2: deletes committed in the same snapshot as a data
file apply to it; older deletes never do).

pyiceberg reads manifests with the v2 read schema, which has no
``referenced_data_file``: a delete file's referenced data file is recovered
from its ``file_path`` bounds when the lower and upper bound are the same
path (how Iceberg, and :mod:`connector.iceberg.position_deletes`, write
file-scoped position deletes; pyiceberg's own scan matches them that way).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyiceberg.manifest import DATA_FILE_TYPE, DataFile, DataFileContent, ManifestContent
from pyiceberg.table import Table

FILE_PATH_ID = 2147483546  # Iceberg's reserved field id of a position delete file's `file_path`
POS_ID = 2147483545  # ... and of its `pos`
#: Where a v3 DataFile record holds ``referenced_data_file`` (pyiceberg's DataFile has no property for it).
REFERENCED_POSITION = [f.field_id for f in DATA_FILE_TYPE[3].fields].index(143)


@dataclass(frozen=True)
class LiveFile:
    file: DataFile
    sequence_number: int  # the data sequence number of its manifest entry


@dataclass
class LiveFiles:
    """The live data files and delete files of one snapshot, each with its data sequence number."""

    data: list[LiveFile] = field(default_factory=list)
    deletes: list[LiveFile] = field(default_factory=list)

    def data_by_path(self) -> dict[str, LiveFile]:
        return {live.file.file_path: live for live in self.data}

    def deletes_by_data_file(self) -> dict[str, list[LiveFile]]:
        """The file-scoped position delete files of each data file path that they apply to.

        Only deletes at or above the data file's sequence number are listed (the others never apply);
        delete files that are not file-scoped (see :func:`unscoped`) are not.
        """
        data = self.data_by_path()
        found: dict[str, list[LiveFile]] = {}
        for live in self.deletes:
            path = referenced_data_file(live.file)
            target = data.get(path) if path is not None else None
            if target is not None and live.sequence_number >= target.sequence_number:
                found.setdefault(path, []).append(live)  # type: ignore[arg-type]  # path is set with target
        return found

    def unscoped(self) -> list[LiveFile]:
        """Delete files that may apply to several data files: equality deletes, partition-scoped ones."""
        return [live for live in self.deletes if referenced_data_file(live.file) is None]


def referenced_data_file(delete_file: DataFile) -> str | None:
    """The one data file a position delete file references; None for other delete files."""
    if delete_file.content != DataFileContent.POSITION_DELETES:
        return None
    if len(delete_file) > REFERENCED_POSITION and delete_file[REFERENCED_POSITION]:
        return delete_file[REFERENCED_POSITION]  # a v3 record (ours, before a manifest round trip)
    lower = (delete_file.lower_bounds or {}).get(FILE_PATH_ID)
    upper = (delete_file.upper_bounds or {}).get(FILE_PATH_ID)
    if lower is None or lower != upper:
        return None
    try:
        return lower.decode("utf-8")
    except UnicodeDecodeError:
        return None


def spec_id_of(data_file: DataFile, default_spec_id: int) -> int:
    """The spec id of ``data_file``: set on files read from manifests, absent on files pyiceberg just wrote
    (written in the table's default spec, ``default_spec_id``)."""
    return getattr(data_file, "_spec_id", default_spec_id)


def live_files(table: Table, branch: str | None) -> LiveFiles:
    """The live files of ``branch``'s head (main when None); empty for a branch without snapshots."""
    head = table.snapshot_by_name(branch or "main")
    found = LiveFiles()
    if head is None:
        return found
    for manifest in head.manifests(table.io):
        target = found.deletes if manifest.content == ManifestContent.DELETES else found.data
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            sequence = entry.sequence_number if entry.sequence_number is not None else 0
            target.append(LiveFile(entry.data_file, sequence))
    return found
