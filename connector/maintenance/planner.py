"""Compaction planning: which data files of which partition go together into one new file.

Pure functions over candidates (partition, path, size, and the position
deletes against the file) so the rules can be tested alone:

* small files: a partition is compacted once it holds at least
  ``min_input_files`` small files (below ``small_file_size``, and not
  ``as_written``: a file a backfill wrote just now, as large as its task made it); its small files
  are packed, largest first, into groups of at most ``target_size`` bytes
  (first fit); a group of one file would rewrite it unchanged and is dropped;
* deletes: a partition whose data files have at least ``deletes_min_files``
  delete files, or whose deleted rows are at least ``deletes_min_ratio`` of
  its rows, has its files with deletes (and its small files) packed the same
  way, and a group of one file with deletes is kept: rewriting it applies them.

Partitions never mix. Whatever the rule, a rewritten file's deletes are
applied and dropped with it (see :mod:`.compaction`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence


@dataclass(frozen=True)
class Candidate:
    partition: Hashable  # (spec id, partition values)
    path: str
    size: int
    delete_files: int = 0  # position delete files applying to it
    deleted_rows: int = 0  # rows those delete files delete (positions, as their record counts say)
    rows: int = 0  # its record count
    as_written: bool = False  # written just now by a backfill task at its full size: never small (see .compaction)


@dataclass
class Group:
    partition: Hashable
    files: list[Candidate]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


def plan_groups(files: Iterable[Candidate], *, target_size: int, small_file_size: int, min_input_files: int,
                deletes_min_files: int = 2**31, deletes_min_ratio: float = math.inf) -> list[Group]:
    """The groups to rewrite, partition by partition (in first-seen order)."""
    by_partition: dict[Hashable, list[Candidate]] = {}
    for candidate in files:
        by_partition.setdefault(candidate.partition, []).append(candidate)
    groups: list[Group] = []
    for partition, members in by_partition.items():
        small = [c for c in members if is_small(c, small_file_size)]
        if has_many_deletes(members, deletes_min_files, deletes_min_ratio):
            chosen = [c for c in members if c.delete_files or is_small(c, small_file_size)]
            groups.extend(Group(partition, packed) for packed in bin_pack(chosen, target_size)
                          if len(packed) > 1 or packed[0].delete_files)
        elif len(small) >= min_input_files:
            groups.extend(Group(partition, packed) for packed in bin_pack(small, target_size) if len(packed) > 1)
    return groups


def is_small(candidate: Candidate, small_file_size: int) -> bool:
    return candidate.size < small_file_size and not candidate.as_written


def has_many_deletes(members: Sequence[Candidate], min_files: int, min_ratio: float) -> bool:
    """Whether a partition's delete files pass either threshold (and it has any)."""
    delete_files = sum(c.delete_files for c in members)
    if not delete_files:
        return False
    rows = sum(c.rows for c in members)
    return delete_files >= min_files or (rows > 0 and sum(c.deleted_rows for c in members) / rows >= min_ratio)


def bin_pack(files: Sequence[Candidate], capacity: int) -> list[list[Candidate]]:
    """First fit decreasing: every file in exactly one bin, each bin's total at most ``capacity``
    (a file larger than ``capacity`` alone in its bin)."""
    bins: list[list[Candidate]] = []
    room: list[int] = []
    for candidate in sorted(files, key=lambda f: (-f.size, f.path)):
        for index, free in enumerate(room):
            if candidate.size <= free:
                bins[index].append(candidate)
                room[index] -= candidate.size
                break
        else:
            bins.append([candidate])
            room.append(capacity - candidate.size)
    return bins
