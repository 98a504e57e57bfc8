"""The Apache Iceberg sink's single-message transforms, in Python.

Class names in connector configs: ``org.apache.iceberg.connect.transforms.<Name>``
or the Tabular ``io.tabular.iceberg.connect.transforms.<Name>`` (see
docs/smt-iceberg.md). Importing this package is light: no Spark, no Arrow.
"""

from smt.iceberg.copy_value import CopyValue
from smt.iceberg.debezium import DebeziumTransform
from smt.iceberg.dms import DmsTransform
from smt.iceberg.json_to_map import JsonToMapException, JsonToMapTransform
from smt.iceberg.kafka_metadata import KafkaMetadataTransform
from smt.iceberg.mongo_debezium import MongoDebeziumTransform

__all__ = [
    "CopyValue", "DebeziumTransform", "DmsTransform", "JsonToMapException", "JsonToMapTransform",
    "KafkaMetadataTransform", "MongoDebeziumTransform",
]
