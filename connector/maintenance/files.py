"""What a table's snapshots reference, and listing and deleting files under its location."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from pyarrow.fs import FileSelector, FileSystem, FileType
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

log = logging.getLogger(__name__)


def local_path(location: str) -> str:
    """The path part of a location, as the file system lists it (no scheme)."""
    return PyArrowFileIO.parse_location(location)[2]


@dataclass
class References:
    manifest_lists: set[str] = field(default_factory=set)
    manifests: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)  # data and delete files, any entry status

    def all(self) -> set[str]:
        return self.manifest_lists | self.manifests | self.files


def references(table: Table, snapshots: Iterable[Snapshot]) -> References:
    """Every file ``snapshots`` reference, each manifest read once (paths as the file system lists them)."""
    found = References()
    seen: set[str] = set()
    for snapshot in snapshots:
        found.manifest_lists.add(local_path(snapshot.manifest_list))
        for manifest in snapshot.manifests(table.io):
            if manifest.manifest_path in seen:
                continue
            seen.add(manifest.manifest_path)
            found.manifests.add(local_path(manifest.manifest_path))
            for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=False):
                found.files.add(local_path(entry.data_file.file_path))
    return found


def file_system(table: Table, location: str) -> tuple[FileSystem, str] | None:
    """The Arrow file system of ``location`` and its path there; None when the table's FileIO has none."""
    io = table.io
    scheme, netloc, path = PyArrowFileIO.parse_location(location)
    if isinstance(io, PyArrowFileIO):
        return io.fs_by_scheme(scheme, netloc), path
    try:
        fs, path = FileSystem.from_uri(location)
        return fs, path
    except Exception:  # noqa: BLE001 - an unknown scheme: nothing to list
        return None


def list_files(table: Table, location: str) -> Iterator[tuple[str, float]]:
    """(path, modification time in seconds) of every file under ``location``."""
    found = file_system(table, location)
    if found is None:
        return
    fs, path = found
    try:
        infos = fs.get_file_info(FileSelector(path.rstrip("/"), recursive=True, allow_not_found=True))
    except OSError as exc:
        log.warning("Cannot list %s: %s", location, exc)
        return
    for info in infos:
        if info.type == FileType.File:
            mtime = info.mtime.timestamp() if info.mtime is not None else float("inf")
            yield info.path, mtime


def delete_files(table: Table, paths: Iterable[str]) -> int:
    """Delete ``paths`` (file system paths under the table's location); how many were deleted."""
    found = file_system(table, table.location())
    if found is None:
        return 0
    fs, _ = found
    deleted = 0
    for path in sorted(paths):
        try:
            fs.delete_file(path)
            deleted += 1
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("Could not delete %s: %s", path, exc)
    return deleted
