"""An S3 warehouse end to end: Tansu → Spark → Iceberg data and metadata as objects on a real S3 endpoint.

The endpoint is ``moto_server`` over HTTP on loopback (``s3_endpoint``); the
catalog is the SQLite SQL catalog, its warehouse ``s3://<bucket>/wh``. The
catalog settings are spelled as a user of the Java sink writes them
(``io-impl=...S3FileIO``, ``s3.path-style-access``, ``client.region``) and as a
pyiceberg user would (``s3.region``); both must work unchanged.
"""

from __future__ import annotations

import json
import uuid

import pytest

from connector.config.catalog_config import pyiceberg_properties
from connector.data.catalog import load_catalog
from tests.integration.harness import (
    load_table,
    produce_round_robin,
    run_until_caught_up,
    sink_props,
    snapshot_offsets,
    table_rows,
    unique,
)
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration


def events(start: int, count: int) -> list[bytes]:
    return [json.dumps({"id": i, "kind": ["a", "b", "c"][i % 3], "amount": i / 4}).encode()
            for i in range(start, start + count)]


def new_bucket(s3_endpoint) -> str:
    bucket = f"icefloe-{uuid.uuid4().hex[:12]}"
    s3_endpoint.client().create_bucket(Bucket=bucket)
    return bucket


def java_s3_settings(s3_endpoint, bucket: str) -> dict[str, str]:
    """The catalog keys a Java Iceberg sink config on S3 (or MinIO) carries."""
    return {
        "iceberg.catalog.warehouse": f"s3://{bucket}/wh",
        "iceberg.catalog.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "iceberg.catalog.s3.endpoint": s3_endpoint.url,
        "iceberg.catalog.s3.access-key-id": s3_endpoint.access_key_id,
        "iceberg.catalog.s3.secret-access-key": s3_endpoint.secret_access_key,
        "iceberg.catalog.s3.path-style-access": "true",
        "iceberg.catalog.client.region": s3_endpoint.region,
    }


def test_java_s3_file_io_settings_translate_for_pyiceberg():
    translated, _ = pyiceberg_properties({
        "type": "sql", "uri": "sqlite:///:memory:", "warehouse": "s3://b/wh",
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO", "s3.path-style-access": "true",
        "s3.endpoint": "http://127.0.0.1:9000", "client.region": "eu-west-1",
    })
    assert translated["py-io-impl"] == "pyiceberg.io.pyarrow.PyArrowFileIO"
    assert "io-impl" not in translated
    assert translated["s3.force-virtual-addressing"] == "false"
    assert translated["s3.endpoint"] == "http://127.0.0.1:9000"
    assert translated["client.region"] == "eu-west-1"
    assert translated["warehouse"] == "s3://b/wh"  # a remote warehouse is never made a local path

    virtual, _ = pyiceberg_properties({"type": "sql", "uri": "sqlite:///:memory:", "s3.path-style-access": "false"})
    assert virtual["s3.force-virtual-addressing"] == "true"


def test_rows_land_in_an_s3_warehouse_and_a_second_run_resumes_exactly(kafka_broker, spark, s3_endpoint, tmp_path):
    bucket = new_bucket(s3_endpoint)
    topic, table = unique("s3events"), "db.s3_events"
    props = sink_props(unique("s3sink"), topic, table, tmp_path)
    props.update(java_s3_settings(s3_endpoint, bucket))
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    produce_round_robin(kafka_broker.bootstrap, topic, events(0, 900), 3)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert sorted(r["id"] for r in table_rows(props, table)) == list(range(900))
    iceberg_table = load_table(props, table)
    assert iceberg_table.location().startswith(f"s3://{bucket}/wh/")
    keys = s3_endpoint.object_keys(bucket)
    data_files = [k for k in keys if k.startswith("wh/") and "/data/" in k and k.endswith(".parquet")]
    metadata_files = [k for k in keys if "/metadata/" in k and k.endswith(".metadata.json")]
    manifest_lists = [k for k in keys if "/metadata/snap-" in k and k.endswith(".avro")]
    assert data_files and metadata_files and manifest_lists, keys
    # Every data file the table references is an object in the bucket, and vice versa.
    referenced = {task.file.file_path for task in iceberg_table.scan().plan_files()}
    assert referenced == {f"s3://{bucket}/{k}" for k in data_files}
    assert iceberg_table.metadata_location.removeprefix(f"s3://{bucket}/") in metadata_files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.db"]  # nothing else on local disk

    produce_round_robin(kafka_broker.bootstrap, topic, events(900, 600), 3)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)  # nothing new: no snapshot, no rows

    assert sorted(r["id"] for r in table_rows(props, table)) == list(range(1500))
    assert snapshot_offsets(props, table) == {
        f"{topic}.connect-{props['name']}": {"0": 500, "1": 500, "2": 500}}
    snapshots = load_table(props, table).snapshots()
    assert len(snapshots) == 2
    after = s3_endpoint.object_keys(bucket)
    assert set(keys) < set(after)  # the second run added objects and removed none


def test_pyiceberg_spelling_of_the_s3_settings_works_too(kafka_broker, spark, s3_endpoint, tmp_path):
    bucket = new_bucket(s3_endpoint)
    topic, table = unique("s3plain"), "db.s3_plain"
    props = sink_props(unique("s3plain"), topic, table, tmp_path)
    props.update({
        "iceberg.catalog.warehouse": f"s3://{bucket}/wh",
        "iceberg.catalog.s3.endpoint": s3_endpoint.url,
        "iceberg.catalog.s3.access-key-id": s3_endpoint.access_key_id,
        "iceberg.catalog.s3.secret-access-key": s3_endpoint.secret_access_key,
        "iceberg.catalog.s3.region": s3_endpoint.region,
        "iceberg.catalog.s3.force-virtual-addressing": "false",
    })
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, events(0, 200), 2)

    run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert sorted(r["id"] for r in table_rows(props, table)) == list(range(200))
    assert any(k.endswith(".parquet") for k in s3_endpoint.object_keys(bucket, "wh/"))
    assert load_catalog(props).load_table(table).location().startswith(f"s3://{bucket}/wh/")
