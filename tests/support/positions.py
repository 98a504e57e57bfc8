"""Where rows sit in data files: the (file_path, pos) a position delete file lists, found by reading the files."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.table import Table


def positions_of(table: Table, files: list, doomed: set[int]) -> pa.Table:
    """(file_path, pos) of the rows of ``files`` whose id is in ``doomed``."""
    paths, positions = [], []
    for data_file in files:
        with table.io.new_input(data_file.file_path).open() as stream:
            ids = pq.read_table(stream, columns=["id"]).column("id").to_pylist()
        for pos, value in enumerate(ids):
            if value in doomed:
                paths.append(data_file.file_path)
                positions.append(pos)
    return pa.table({"file_path": pa.array(paths, pa.string()), "pos": pa.array(positions, pa.int64())})
