"""Benchmarks: icefloe against a raw confluent-kafka baseline (``make bench``)."""
