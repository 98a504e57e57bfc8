"""docs/operations.md lists every metric icefloe exports, with its labels."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client import CollectorRegistry

from connector.api.errors import ConnectException
from connector.commit.coordinator import CycleReport
from connector.maintenance.compaction import CompactionReport
from connector.maintenance.expiry import ExpiryReport
from connector.maintenance.status import MaintenanceReport, TableMaintenance
from connector.metrics import JobMetrics

DOC = Path(__file__).parents[2] / "docs" / "operations.md"


def documented() -> dict[str, set[str]]:
    rows = re.findall(r"^\| `(icefloe_\w+)` \| \w+ \| ([\w, ]+) \|", DOC.read_text(), re.MULTILINE)
    return {name: {label.strip() for label in labels.split(",")} for name, labels in rows}


def test_every_metric_is_documented_with_its_labels():
    registry = CollectorRegistry()
    metrics = JobMetrics("sink", registry=registry)
    metrics.started()
    metrics.cycle_done(CycleReport(records_read=1, records_by_task={"0": 1}, bytes_read={"t": 9},
                                   rows_written={"db.t": 1}, files_written={"db.t": 1}, bytes_written={"db.t": 99},
                                   snapshots={"db.t": 1}, next_offsets={("t", 0): 1},
                                   schema_changes={"db.t": {"create": 1}}, dlq_records={"t": 1},
                                   seconds=1.0), {("t", 0): 1})
    metrics.maintenance_done(MaintenanceReport(tables={"db.t": TableMaintenance(
        compaction=CompactionReport(groups=1, files_removed=2, bytes_rewritten=9), expiry=ExpiryReport(expired=1),
        data_files=1)}))
    metrics.failed(ConnectException("boom"))
    metrics.task_failed(0)
    exported: dict[str, set[str]] = {}
    for family in registry.collect():
        name = family.name + ("_total" if family.type == "counter" else "")
        for sample in family.samples:
            exported.setdefault(name, set()).update(set(sample.labels) - {"le"})  # "le": histogram buckets

    assert documented() == exported
