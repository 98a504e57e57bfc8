"""The throughput baseline script keeps working (tiny sizes; no timing asserted)."""

from __future__ import annotations

from tests.bench.raw_consume import (
    raw_consume_records_per_second,
    read_range_records_per_second,
    sample_records,
)
from tests.bench.run import hand_rolled_rate, raw_consume_rate
from tests.support.tansu import create_topic, produce


def test_sample_records_are_about_100_bytes():
    sizes = [len(r) for r in sample_records(1000)]
    assert 90 <= sum(sizes) / len(sizes) <= 110


def test_raw_and_read_range_rates_over_a_small_topic(kafka_broker, topic_name):
    topic = topic_name()
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce(kafka_broker.bootstrap, topic, sample_records(2000))
    assert raw_consume_records_per_second(kafka_broker.bootstrap, topic, 2000, timeout=30) > 0
    rate, rows = read_range_records_per_second(kafka_broker.bootstrap, topic)
    assert rows == 2000 and rate > 0


def test_the_baselines_run_as_scripts_of_their_own(kafka_broker, topic_name, tmp_path):
    topic = topic_name()
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce(kafka_broker.bootstrap, topic, sample_records(2000))
    assert raw_consume_rate(kafka_broker.bootstrap, topic, records=2000) > 0
    assert hand_rolled_rate(kafka_broker.bootstrap, topic, tmp_path / "hand", records=2000) > 0
