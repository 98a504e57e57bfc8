"""Compaction planning: which small data files of which partition go together into one new file.

Pure functions over (partition, path, size) so the rules can be tested alone:
a partition is compacted once it holds at least ``min_input_files`` small files
(below ``small_file_size``); its small files are packed, largest first, into
groups of at most ``target_size`` bytes (first fit); a group of one file
would rewrite it unchanged and is dropped. Partitions never mix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Iterable, Sequence


@dataclass(frozen=True)
class Candidate:
    partition: Hashable  # (spec id, partition values)
    path: str
    size: int


@dataclass
class Group:
    partition: Hashable
    files: list[Candidate]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


def plan_groups(files: Iterable[Candidate], *, target_size: int, small_file_size: int,
                min_input_files: int) -> list[Group]:
    """The groups to rewrite, partition by partition (in first-seen order)."""
    by_partition: dict[Hashable, list[Candidate]] = {}
    for candidate in files:
        if candidate.size < small_file_size:
            by_partition.setdefault(candidate.partition, []).append(candidate)
    groups: list[Group] = []
    for partition, small in by_partition.items():
        if len(small) >= min_input_files:
            groups.extend(Group(partition, packed) for packed in bin_pack(small, target_size) if len(packed) > 1)
    return groups


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
