"""A row delta: one snapshot that adds data and position delete files and removes data and delete files.

pyiceberg 0.12 writes no delete file and has no RowDelta; this is one, on its
snapshot producer. The snapshot, on any branch (the first commit to a branch
of a table without snapshots too, see :mod:`connector.iceberg.branches`):

* adds data files (one DATA manifest per spec) and file-scoped position delete
  files (one DELETES manifest per spec, ``content=deletes`` in its metadata,
  ``referenced_data_file`` stored). The new delete files get the snapshot's
  sequence number, so they apply to the data files added with them as well
  as to older ones (a position delete applies to data files whose sequence
  number is at most its own);
* removes data and delete files: the head's manifests holding them are
  rewritten with those entries DELETED and every other one EXISTING with its
  original snapshot id and sequence numbers (a manifest left with no live
  entry is not rewritten: its entries go DELETED into one manifest per content
  and spec); the other manifests are kept;
* carries ``properties`` (the offsets) in its summary with pyiceberg's counts
  (added-delete-files, added-position-deletes, total-position-deletes, ...);
  its operation is the one Java's ``RowDelta`` gives the same change: ``append``
  when it only adds data, ``delete`` when it adds delete files and no data,
  ``overwrite`` otherwise; a rewrite (compaction: the same rows in new files,
  their delete files applied) is a ``replace``, as Java's ``RewriteFiles``
  records it. The summary also carries the fields Java writes
  (:mod:`connector.iceberg.snapshot_summary`).

Before writing anything it checks the head it is built on, so that no row can
come back: every file it removes is live, every delete file it adds
references a data file live in the head or added by this snapshot and not
removed by it, and every data file it removes takes along all the live
delete files referencing it (else another writer's deletes against that file
landed after the caller planned, and a rewrite would resurrect those rows).
A failed check raises :class:`RowDeltaConflict`. (Delete files that do not
reference one data file, which other engines may write, are not checked:
compaction leaves tables holding them alone.)

Retrying is the caller's business: pyiceberg's own retry (which would rebuild
the snapshot on a new head without the caller recomputing its positions) is
bypassed, and a :class:`~pyiceberg.exceptions.CommitFailedException` from the
catalog is raised unchanged after the manifests written for the attempt are
deleted. Delete files need a format-version 2 table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from pyiceberg.avro.file import AvroOutputFile
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.manifest import (
    DATA_FILE_TYPE,
    DataFile,
    DataFileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriter,
    ManifestWriterV2,
    data_file_with_partition,
    manifest_entry_schema_with_data_file,
)
from pyiceberg.table import Table, TableProperties
from pyiceberg.table.snapshots import Operation, SnapshotSummaryCollector, Summary
from pyiceberg.table.update import UpdateTableMetadata
from pyiceberg.table.update.snapshot import _SnapshotProducer
from pyiceberg.typedef import EMPTY_DICT
from pyiceberg.types import NestedField, StringType, StructType

from connector.api.errors import ConnectException
from connector.iceberg.branches import commit_to_branch
from connector.iceberg.live_files import referenced_data_file, spec_id_of
from connector.iceberg.snapshot_summary import with_totals

REFERENCED_DATA_FILE = NestedField(143, "referenced_data_file", StringType(), required=False)
_V2_FIELDS = [f.name for f in DATA_FILE_TYPE[2].fields]


class RowDeltaConflict(CommitFailedException):
    """The branch head no longer fits the row delta (a file it removes or deletes rows of is gone, or a
    data file it removes got new deletes): nothing was committed; reload the table and plan again."""


@dataclass(frozen=True)
class RowDeltaFiles:
    """What one row delta adds and removes (each a DataFile of the matching content)."""

    added_data: tuple[DataFile, ...] = ()
    added_deletes: tuple[DataFile, ...] = ()
    removed_data: tuple[DataFile, ...] = ()
    removed_deletes: tuple[DataFile, ...] = ()

    @property
    def only_appends(self) -> bool:
        return not (self.added_deletes or self.removed_data or self.removed_deletes)

    def operation(self) -> Operation:
        """The operation Java's ``BaseRowDelta`` records for these files."""
        if self.only_appends:
            return Operation.APPEND
        if self.added_deletes and not self.added_data:
            return Operation.DELETE
        return Operation.OVERWRITE

    def check_contents(self) -> None:
        """ValueError when a file is of the wrong content or an added delete file is not file-scoped."""
        for name, files, content in (("added_data", self.added_data, DataFileContent.DATA),
                                     ("removed_data", self.removed_data, DataFileContent.DATA),
                                     ("added_deletes", self.added_deletes, DataFileContent.POSITION_DELETES)):
            wrong = [f.file_path for f in files if f.content != content]
            if wrong:
                raise ValueError(f"{name} must hold {content.name} files only, not {', '.join(wrong)}")
        unscoped = [f.file_path for f in self.added_deletes if referenced_data_file(f) is None]
        if unscoped:
            raise ValueError(f"Position delete files must reference one data file: {', '.join(unscoped)}")


def commit_row_delta(table: Table, branch: str | None, properties: Mapping[str, str], *,
                     added_data: Iterable[DataFile] = (), added_deletes: Iterable[DataFile] = (),
                     removed_data: Iterable[DataFile] = (), removed_deletes: Iterable[DataFile] = (),
                     rewrite: bool = False) -> int:
    """Commit one row delta to ``branch`` (main when None) of ``table``; the new snapshot's id.

    ``rewrite``: the delta rewrites rows that stay (compaction), recorded as a ``replace``.

    Raises :class:`RowDeltaConflict` when the head no longer fits (see the module), the catalog's
    :class:`CommitFailedException` when another writer committed first, ConnectException when delete
    files are added to or removed from a table that is not format-version 2 (a delta of data files
    only, as compaction makes, works on any). ``table`` holds the new metadata afterwards.
    """
    files = RowDeltaFiles(tuple(added_data), tuple(added_deletes), tuple(removed_data), tuple(removed_deletes))
    files.check_contents()
    operation = Operation.REPLACE if rewrite else files.operation()
    if files.added_deletes or files.removed_deletes:
        require_v2(table)
    return commit_to_branch(table, branch or "main", lambda transaction, target: _RowDelta(
        transaction, target, dict(properties), files, operation))


def require_v2(table: Table) -> None:
    version = table.metadata.format_version
    if version != 2:
        name = ".".join(table.name())
        if version < 2:
            raise ConnectException(f"upsert mode needs an Iceberg format-version 2 table; {name} is v{version}")
        raise ConnectException(f"upsert mode writes position delete files, which format-version {version} "
                               f"replaces by deletion vectors; {name} is v{version} (icefloe writes v2 only)")


class DeleteManifestWriter(ManifestWriterV2):
    """A v2 manifest of delete files that also stores ``referenced_data_file`` (field 143).

    pyiceberg's v2 data-file schema lacks the field; the entries are written from v3 records (which
    have it), so file-scoped deletes keep it through every rewrite of their manifest.
    """

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}

    def new_writer(self) -> AvroOutputFile[ManifestEntry]:
        partition_type = self._spec.partition_type(self._schema)
        file_type = data_file_with_partition(partition_type, format_version=2)
        file_type = StructType(*file_type.fields, REFERENCED_DATA_FILE)
        record_type = data_file_with_partition(partition_type, format_version=3)
        return AvroOutputFile[ManifestEntry](
            output_file=self._output_file,
            file_schema=manifest_entry_schema_with_data_file(2, file_type),
            record_schema=manifest_entry_schema_with_data_file(2, record_type),
            schema_name="manifest_entry",
            metadata=self._meta,
        )

    def prepare_entry(self, entry: ManifestEntry) -> ManifestEntry:
        entry = super().prepare_entry(entry)
        return ManifestEntry.from_args(status=entry.status, snapshot_id=entry.snapshot_id,
                                       sequence_number=entry.sequence_number,
                                       file_sequence_number=entry.file_sequence_number,
                                       data_file=with_reference(entry.data_file))


def with_reference(delete_file: DataFile) -> DataFile:
    """``delete_file`` as a v3 record with its ``referenced_data_file`` (from its bounds after a manifest read)."""
    if len(delete_file) > len(_V2_FIELDS):  # a v3 record already
        return delete_file
    copy = DataFile.from_args(_table_format_version=3, **{name: getattr(delete_file, name) for name in _V2_FIELDS},
                              referenced_data_file=referenced_data_file(delete_file))
    copy.spec_id = delete_file.spec_id
    return copy


@dataclass
class _HeadManifest:
    manifest: ManifestFile
    entries: list[ManifestEntry] = field(default_factory=list)  # its live entries


class _RowDelta(_SnapshotProducer["_RowDelta"]):
    """The snapshot producer of a row delta (see the module for its rules)."""

    def __init__(self, transaction, branch: str | None, properties: dict[str, str], files: RowDeltaFiles,
                 operation: Operation):
        super().__init__(operation, transaction, transaction._table.io, snapshot_properties=properties,
                         branch=branch)
        self._files = files
        self._removed: list[DataFile] = []  # the removed files as the head's manifests hold them

    def commit(self) -> None:
        """Stage the snapshot without registering for pyiceberg's retry: retrying is the caller's."""
        UpdateTableMetadata.commit(self)

    def _existing_manifests(self) -> list[ManifestFile]:
        return []  # unused: _manifests builds the whole list

    def _deleted_entries(self) -> list[ManifestEntry]:
        return []  # unused: _manifests builds the whole list

    def _manifests(self) -> list[ManifestFile]:
        head = self._head_manifests()
        self._check(head)
        return self._added_manifests() + self._kept_manifests(head)

    def _head_manifests(self) -> list[_HeadManifest]:
        if self._parent_snapshot_id is None:
            return []
        parent = self._transaction.table_metadata.snapshot_by_id(self._parent_snapshot_id)
        assert parent is not None, "the branch head is in the metadata it was read from"
        return [_HeadManifest(m, m.fetch_manifest_entry(self._io, discard_deleted=True))
                for m in parent.manifests(self._io)]

    def _check(self, head: list[_HeadManifest]) -> None:
        """RowDeltaConflict unless the head holds what this delta removes and deletes rows of."""
        live_data = {e.data_file.file_path for h in head if h.manifest.content == ManifestContent.DATA
                     for e in h.entries}
        live_deletes = [e.data_file for h in head if h.manifest.content == ManifestContent.DELETES
                        for e in h.entries]
        files = self._files
        removed_data = {f.file_path for f in files.removed_data}
        removed_deletes = {f.file_path for f in files.removed_deletes}
        _conflict_unless(removed_data <= live_data, "data file(s) it removes are not live",
                         removed_data - live_data)
        live_delete_paths = {f.file_path for f in live_deletes}
        _conflict_unless(removed_deletes <= live_delete_paths, "delete file(s) it removes are not live",
                         removed_deletes - live_delete_paths)
        targets = (live_data | {f.file_path for f in files.added_data}) - removed_data
        referenced = {referenced_data_file(f) for f in files.added_deletes}
        _conflict_unless(referenced <= targets, "its deletes reference data file(s) that are not live",
                         referenced - targets)
        left = {f.file_path for f in live_deletes
                if referenced_data_file(f) in removed_data and f.file_path not in removed_deletes}
        _conflict_unless(not left, "data file(s) it removes have delete files it does not remove", left)

    def _added_manifests(self) -> list[ManifestFile]:
        manifests = []
        for content, files in ((ManifestContent.DATA, self._files.added_data),
                               (ManifestContent.DELETES, self._files.added_deletes)):
            for spec_id, of_spec in _by_spec(files, self._transaction.table_metadata.default_spec_id).items():
                with self._writer(content, spec_id) as writer:
                    for data_file in of_spec:
                        writer.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED,
                                                           snapshot_id=self._snapshot_id, data_file=data_file))
                manifests.append(writer.to_manifest_file())
        return manifests

    def _kept_manifests(self, head: list[_HeadManifest]) -> list[ManifestFile]:
        """The head's manifests, those holding a removed file rewritten (see the module).

        A manifest all of whose live files go is not rewritten: its entries join one manifest
        of DELETED entries per content and spec, so that a delta removing files from many
        manifests (a compaction after many small commits) leaves a few manifests for readers
        to open, not one per manifest it touched.
        """
        removed = {f.file_path for f in (*self._files.removed_data, *self._files.removed_deletes)}
        kept: list[ManifestFile] = []
        emptied: dict[tuple[ManifestContent, int], list[ManifestEntry]] = {}
        for held in head:
            manifest = held.manifest
            going = [e for e in held.entries if e.data_file.file_path in removed]
            if not going:
                if manifest.has_added_files() or manifest.has_existing_files():
                    kept.append(manifest)  # as a fast append does: a manifest of deletions only is dropped
            elif len(going) == len(held.entries):
                emptied.setdefault((manifest.content, manifest.partition_spec_id), []).extend(going)
            else:
                kept.append(self._rewritten(manifest, held.entries, removed))
            self._removed.extend(e.data_file for e in going)
        for (content, spec_id), entries in emptied.items():
            with self._writer(content, spec_id) as writer:
                for entry in entries:
                    writer.delete(entry)
            kept.append(writer.to_manifest_file())
        return kept

    def _rewritten(self, manifest: ManifestFile, entries: list[ManifestEntry], removed: set[str]) -> ManifestFile:
        """``manifest`` again with the ``removed`` files' entries DELETED and the others EXISTING."""
        with self._writer(manifest.content, manifest.partition_spec_id) as writer:
            for entry in entries:
                if entry.data_file.file_path in removed:
                    writer.delete(entry)
                else:
                    writer.existing(entry)
        return writer.to_manifest_file()

    def _writer(self, content: ManifestContent, spec_id: int) -> ManifestWriter:
        if content == ManifestContent.DATA:
            return self.new_manifest_writer(self.spec(spec_id))
        return DeleteManifestWriter(self.spec(spec_id), self.schema(), self.new_manifest_output(),
                                    self._snapshot_id, self._compression)

    def _summary(self, snapshot_properties: dict[str, str] = EMPTY_DICT) -> Summary:
        """pyiceberg's counts and totals, each file counted in its own partition spec."""
        metadata = self._transaction.table_metadata
        limit = int(metadata.properties.get(TableProperties.WRITE_PARTITION_SUMMARY_LIMIT,
                                            TableProperties.WRITE_PARTITION_SUMMARY_LIMIT_DEFAULT))
        collector = SnapshotSummaryCollector(partition_summary_limit=limit)
        specs, schema, default = metadata.specs(), metadata.schema(), metadata.default_spec_id
        for added in (*self._files.added_data, *self._files.added_deletes):
            collector.add_file(added, partition_spec=specs[spec_id_of(added, default)], schema=schema)
        for removed in self._removed:
            collector.remove_file(removed, partition_spec=specs[removed.spec_id], schema=schema)
        parent = metadata.snapshot_by_id(self._parent_snapshot_id) if self._parent_snapshot_id is not None else None
        return with_totals(self._operation, {**collector.build(), **snapshot_properties},
                           parent.summary if parent is not None else None)


def _by_spec(files: Iterable[DataFile], default_spec_id: int) -> dict[int, list[DataFile]]:
    grouped: dict[int, list[DataFile]] = {}
    for data_file in files:
        grouped.setdefault(spec_id_of(data_file, default_spec_id), []).append(data_file)
    return grouped


def _conflict_unless(condition: bool, what: str, paths: Iterable) -> None:
    if not condition:
        raise RowDeltaConflict(f"The branch head no longer fits this row delta: {what}: "
                               f"{', '.join(sorted(str(p) for p in paths))}")
