"""``make demo``: the quickstart config end to end on embedded defaults.

Starts a Tansu broker on a free loopback port, produces sample events to the
``events`` topic, runs ``connector-configs/quickstart.json`` with local Spark,
a SQLite catalog and a local warehouse until it has caught up, prints what
landed in the table, and stops the broker.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

from connector.embedded.tansu import TansuBroker, create_topic, produce

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "connector-configs" / "quickstart.json"
WORK = Path("icefloe-work")
EVENT_COUNT = 5000
PARTITIONS = 4


def sample_events(count: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    kinds = ["click", "view", "purchase", "signup"]
    base_ms = 1_763_000_000_000
    return [
        json.dumps({
            "id": i,
            "type": rng.choice(kinds),
            "user": f"user-{rng.randrange(500)}",
            "ts": base_ms + i * 1000,
            "amount": round(rng.uniform(1, 500), 2),
        }).encode()
        for i in range(count)
    ]


def show_table(config_props: dict[str, str]) -> None:
    from connector.data.catalog import load_catalog
    from connector.iceberg.snapshot_offsets import OFFSETS_PREFIX

    table = load_catalog(config_props).load_table(config_props["iceberg.tables"])
    data = table.scan().to_arrow()
    snapshots = table.snapshots()
    print(f"\nTable {config_props['iceberg.tables']}: {data.num_rows} rows, {len(snapshots)} snapshot(s)")
    print(f"Schema:\n{table.schema()}")
    print(f"Partition spec: {table.spec()}")
    snapshot = table.current_snapshot()
    summary = snapshot.summary.additional_properties if snapshot is not None and snapshot.summary else {}
    print("Snapshot summary offsets:")
    for key, value in sorted(summary.items()):
        if key.startswith(OFFSETS_PREFIX) or key.startswith("kafka.connect."):
            print(f"  {key} = {value}")
    print("Sample rows:")
    for row in data.sort_by("id").slice(0, 5).to_pylist():
        print(f"  {row}")


def main() -> int:
    from connector import cli
    from connector.config.sink_config import load_connector_file

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    with TansuBroker() as broker:
        print(f"Tansu broker on {broker.bootstrap}")
        create_topic(broker.bootstrap, "events", partitions=PARTITIONS)
        events = sample_events(EVENT_COUNT)
        keys = [json.loads(e)["user"].encode() for e in events]  # keyed by user, as an app would
        produce(broker.bootstrap, "events", events, keys=keys)
        print(f"Produced {EVENT_COUNT} events to 'events' ({PARTITIONS} partitions)")
        code = cli.main(["run", str(CONFIG), "--bootstrap-servers", broker.bootstrap, "--until-caught-up"])
        if code != 0:
            return code
        show_table(load_connector_file(CONFIG))
    return 0


if __name__ == "__main__":
    sys.exit(main())
