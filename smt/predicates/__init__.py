"""Kafka's built-in predicates (``org.apache.kafka.connect.transforms.predicates``)."""
