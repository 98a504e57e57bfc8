"""Which faults a job rides out, and how: TransientRetry runs a cycle again until its deadline."""

from __future__ import annotations

import logging
import threading

import pytest
import requests
from confluent_kafka import KafkaError, KafkaException
from pyiceberg.exceptions import ServiceUnavailableError

from connector.api.errors import ConnectException, RetriableException
from connector.kafka.client_config import KafkaConfigError
from connector.kafka.range_reader import RangeReadError, RangeStalledError
from connector.tolerance.transient import StoppedWhileRetrying, TransientRetry, transient


@pytest.mark.parametrize("exc, expected", [
    (KafkaException(KafkaError(KafkaError._TRANSPORT)), True),
    (KafkaException(KafkaError(KafkaError._ALL_BROKERS_DOWN)), True),
    (ConnectionRefusedError("catalog"), True),
    (RetriableException("a task's broker stalled"), True),
    (RangeStalledError("t[0] at offset 5: no records for 60s"), True),
    (requests.ConnectionError("HTTPConnectionPool(host='catalog', port=8181): Max retries exceeded"), True),
    (ServiceUnavailableError("503: the REST catalog is restarting"), True),
    (OSError("When writing to 'warehouse/db/t/data/x.parquet': AWS Error NETWORK_CONNECTION during "
             "PutObject operation: curlCode: 7, Couldn't connect to server"), True),
    (OSError("When reading 'warehouse/x.parquet': AWS Error SLOW_DOWN during GetObject operation"), True),
    (OSError("When reading 'warehouse/x.parquet': AWS Error ACCESS_DENIED during GetObject operation"), False),
    (FileNotFoundError("warehouse/db/t/metadata/v3.metadata.json"), False),
    (KafkaException(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED)), False),
    (KafkaConfigError("Topic t does not exist"), False),
    (RangeReadError("t[0]: the partition ends at offset 3, before the end of the range"), False),
    (ConnectException("Error converting record (topic: t, partition: 0, offset: 1)"), False),
])
def test_only_transient_errors_are_retried(exc, expected):
    assert transient(exc) is expected


class Flaky:
    """Fails ``failures`` times with ``error``, then answers ``done``."""

    def __init__(self, failures: int, error: Exception):
        self.failures, self.error, self.calls = failures, error, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return "done"


BROKER_DOWN = KafkaException(KafkaError(KafkaError._TRANSPORT, "Failed to get metadata: Broker transport failure"))


def test_a_transient_fault_is_ridden_out():
    action = Flaky(2, BROKER_DOWN)
    assert TransientRetry(timeout_ms=60_000, max_delay_ms=1).call(action, "A commit cycle") == "done"
    assert action.calls == 3


def test_past_the_timeout_the_job_fails_naming_the_fault():
    action = Flaky(100, BROKER_DOWN)
    with pytest.raises(ConnectException, match=r"^A commit cycle failed for \d+s on a transient error, beyond "
                                                r"icefloe.transient.retry-timeout-ms=500: .*Broker transport"):
        TransientRetry(timeout_ms=500, max_delay_ms=1).call(action, "A commit cycle")
    assert action.calls >= 2


def test_zero_fails_at_once_and_other_errors_are_never_retried():
    broker = Flaky(1, BROKER_DOWN)
    with pytest.raises(ConnectException, match="transient error"):
        TransientRetry(timeout_ms=0, max_delay_ms=1).call(broker, "Reading the end offsets")
    bad_record = Flaky(1, ConnectException("Error converting record"))
    with pytest.raises(ConnectException, match="^Error converting record$"):
        TransientRetry(timeout_ms=-1, max_delay_ms=1).call(bad_record, "A commit cycle")
    assert broker.calls == 1 and bad_record.calls == 1


def test_a_stop_request_ends_the_wait():
    stop = threading.Event()
    stop.set()
    with pytest.raises(StoppedWhileRetrying, match="Stop requested"):
        TransientRetry(timeout_ms=-1, max_delay_ms=60_000, stop=stop).call(Flaky(5, BROKER_DOWN), "A commit cycle")


def test_one_line_when_the_fault_is_met_and_one_when_it_is_over(caplog):
    action = Flaky(6, BROKER_DOWN)
    with caplog.at_level(logging.INFO, logger="connector.tolerance.transient"):
        TransientRetry(timeout_ms=60_000, max_delay_ms=1).call(action, "A commit cycle")
    lines = [record.getMessage() for record in caplog.records if record.levelno >= logging.INFO]
    assert len(lines) == 2, lines
    assert lines[0].startswith("A commit cycle failed (") and "Broker transport failure" in lines[0]
    assert "retrying with backoff for up to 60s (icefloe.transient.retry-timeout-ms)" in lines[0]
    assert lines[1].startswith("A commit cycle succeeded again after") and "6 failed attempt(s)" in lines[1]
