"""The Kafka client layer: confluent-kafka (librdkafka) for the driver and the tasks.

Modules, one concept each:

- :mod:`connector.kafka.client_config` -- Kafka Connect worker/connector
  properties to librdkafka configuration (Java key translation, precedence,
  throughput defaults).
- :mod:`connector.kafka.topics` -- ``topics`` / ``topics.regex`` to a sorted
  list of topic-partitions.
- :mod:`connector.kafka.offsets` -- log start and end offsets, and planning of
  offset ranges into task slots (driver side).
- :mod:`connector.kafka.range_reader` -- reading offset ranges into Arrow
  record batches (executor side, no Spark): ``read_range`` for one range,
  ``RangeReader`` to read a task's ranges through one consumer.
- :mod:`connector.kafka.group_offsets` -- committing and reading a consumer
  group's offsets without joining the group.

Nothing is imported here eagerly, so that importing one module (say, the
config translation on the driver) does not pull in pyarrow.
"""
