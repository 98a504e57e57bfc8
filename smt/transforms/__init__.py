"""Kafka's built-in single message transforms (``org.apache.kafka.connect.transforms``), one module each."""
