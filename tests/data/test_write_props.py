"""iceberg.tables.write-props.* (and Tabular's iceberg.table.write-props.*) reach the Parquet writer."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from connector.api.errors import ConfigException
from connector.config.sink_config import SinkConfig
from connector.task import new_pipeline
from tests.data.test_missing_tables import _batch
from tests.integration.harness import sink_props, unique


def test_codec_and_row_groups_follow_the_write_props(tmp_path):
    props = sink_props(unique("wp"), "t", "db.wp", tmp_path, **{
        "iceberg.tables.write-props.write.parquet.compression-codec": "gzip",
        "iceberg.table.write-props.write.parquet.row-group-limit": "4"})
    config = SinkConfig.parse(props)
    assert config.iceberg.write_props == {"write.parquet.compression-codec": "gzip",
                                          "write.parquet.row-group-limit": "4"}
    pipeline = new_pipeline(config, "task-0")
    batch = _batch([{"id": i} for i in range(10)])
    needs = pipeline.process(batch)
    if needs:  # the table is created first, as the coordinator would
        from connector.commit.schema_changes import apply_schema_needs

        apply_schema_needs(pipeline.catalog, config, needs.create, needs.updates)
        pipeline.forget_tables(needs.tables)
        assert not pipeline.process(batch)
    files, rows = pipeline.close()
    assert rows == {"db.wp": 10}
    metadata = pq.read_metadata(files["db.wp"][0].file_path.removeprefix("file://"))
    assert metadata.num_row_groups == 3
    assert metadata.row_group(0).column(0).compression == "GZIP"
    # the table's own properties are left as they are
    assert pipeline.catalog.load_table("db.wp").properties.get("write.parquet.compression-codec") != "gzip"


def test_a_file_format_other_than_parquet_fails_validation(tmp_path):
    with pytest.raises(ConfigException, match="write.format.default: icefloe writes Parquet data files only"):
        SinkConfig.parse(sink_props("c", "t", "db.t", tmp_path, **{
            "iceberg.tables.write-props.write.format.default": "orc"}))
