"""librdkafka's log goes through icefloe's logging, a repeated line once with a count."""

from __future__ import annotations

import logging
import pickle
import socket
import time

from confluent_kafka import Consumer

from connector.kafka.client_config import reader_config
from connector.kafka.client_log import LOGGER_NAME, LibrdkafkaLog, librdkafka_log

FAIL = ("[thrd:127.0.0.1:9999/bootstrap]: 127.0.0.1:9999/bootstrap: Connect to ipv4#127.0.0.1:9999 failed: "
        "Connection refused (after {ms}ms in state CONNECT{suppressed})")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def lines(caplog) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER_NAME]


def test_a_repeated_line_is_logged_once_then_with_its_count(caplog):
    clock = Clock()
    bridge = LibrdkafkaLog(clock=clock, interval=60)
    with caplog.at_level(logging.DEBUG, logger=LOGGER_NAME):
        for i in range(960):  # a minute of one unreachable broker, from several clients
            clock.now = i / 16
            bridge.log(40, "%s [%s] %s", "FAIL", f"rdkafka#consumer-{i % 3}",
                       FAIL.format(ms=i % 5, suppressed=", 3 identical error(s) suppressed" if i % 7 else ""))
        clock.now = 61
        bridge.log(40, "%s [%s] %s", "FAIL", "rdkafka#consumer-9", FAIL.format(ms=0, suppressed=""))

    assert lines(caplog) == [
        (logging.WARNING, "librdkafka FAIL: 127.0.0.1:9999/bootstrap: Connect to ipv4#127.0.0.1:9999 failed: "
                          "Connection refused"),
        (logging.WARNING, "librdkafka FAIL: 127.0.0.1:9999/bootstrap: Connect to ipv4#127.0.0.1:9999 failed: "
                          "Connection refused (and 959 more time(s) in the last 60s)"),
    ]


def test_other_lines_keep_their_level_and_are_not_merged(caplog):
    bridge = LibrdkafkaLog(clock=Clock())
    with caplog.at_level(logging.DEBUG, logger=LOGGER_NAME):
        bridge.log(40, "%s [%s] %s", "SSL", "rdkafka#consumer-1", "ssl.ca.location failed: No such file")
        bridge.log(30, "%s [%s] %s", "CONFWARN", "rdkafka#consumer-1", "Configuration property x is deprecated")
    assert [level for level, _ in lines(caplog)] == [logging.ERROR, logging.WARNING]


def test_the_bridge_travels_to_an_executor_as_that_processs_own():
    assert pickle.loads(pickle.dumps(reader_config({"bootstrap.servers": "b:9092"}, {})))["logger"] \
        is librdkafka_log()


def test_a_client_made_by_icefloe_logs_through_it_not_to_stderr(caplog, capfd):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    consumer = Consumer(reader_config({"bootstrap.servers": f"127.0.0.1:{port}"}, {}))
    with caplog.at_level(logging.INFO, logger=LOGGER_NAME):
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            consumer.poll(0.1)
        consumer.close()

    assert "Connection refused" not in capfd.readouterr().err
    refused = [text for _, text in lines(caplog) if f"127.0.0.1:{port} failed: Connection refused" in text]
    assert len(refused) == 1
