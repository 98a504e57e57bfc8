"""Registering icefloe's Spark Data Source formats with a session.

```python
from connector.spark.formats import register
register(spark)
spark.read.format("icefloe-kafka").options(**{"bootstrap.servers": bs, "topics": "events"}).load()
df.write.format("icefloe-iceberg").options(**connector_config).mode("append").save()
```
"""

from __future__ import annotations

KAFKA_FORMAT = "icefloe-kafka"
ICEBERG_FORMAT = "icefloe-iceberg"


def register(spark) -> None:
    """Register ``icefloe-kafka`` (source) and ``icefloe-iceberg`` (sink) with ``spark``; idempotent."""
    from connector.spark.iceberg_sink import IcebergDataSource
    from connector.spark.kafka_source import KafkaDataSource

    spark.dataSource.register(KafkaDataSource)
    spark.dataSource.register(IcebergDataSource)
