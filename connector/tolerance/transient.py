"""Riding out transient faults: the broker, the registry or the catalog briefly unreachable.

A job's cycle is safe to run again from the start: nothing of it is visible
until its commit, and a re-run resumes from the offsets in the tables. So when a
cycle (or the end-offset lookup before it) fails on an error that a later
attempt may not meet, the job waits and runs it again, with Connect's backoff
(from 300 ms, doubling, at most ``errors.retry.delay.max.ms``), until
``icefloe.transient.retry-timeout-ms`` has passed without a success; then it
fails with one line saying what was unreachable and for how long. Anything
else (a bad record, a config error, an unknown topic) fails at once.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, TypeVar

import requests
from confluent_kafka import KafkaError, KafkaException
from pyiceberg.exceptions import ServerError, ServiceUnavailableError, TooManyRequestsError

from connector.api.errors import ConnectException, RetriableException
from connector.kafka.client_config import KafkaConfigError
from connector.tolerance.backoff import RETRIES_DELAY_MIN_MS, backoff_ms
from connector.tolerance.errant import caused_by_a_service

log = logging.getLogger(__name__)

T = TypeVar("T")

TRANSIENT_KAFKA_CODES = (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT,
                         KafkaError.REQUEST_TIMED_OUT, KafkaError.COORDINATOR_NOT_AVAILABLE,
                         KafkaError.NOT_COORDINATOR)


def transient(exc: BaseException) -> bool:
    """An error a new attempt may not meet: the broker, registry or catalog briefly unreachable.

    Config errors, unknown topics and bad records are not.
    """
    if isinstance(exc, KafkaConfigError):
        return False
    if isinstance(exc, RetriableException) or caused_by_a_service(exc):
        return True  # e.g. a record's conversion that failed because the Schema Registry answered 5xx
    if isinstance(exc, KafkaException):
        error = exc.args[0] if exc.args else None
        return isinstance(error, KafkaError) and (error.retriable() or error.code() in TRANSIENT_KAFKA_CODES)
    if isinstance(exc, (ConnectionError, TimeoutError, requests.ConnectionError, requests.Timeout,
                        ServerError, ServiceUnavailableError, TooManyRequestsError)):
        return True  # a REST catalog or the registry unreachable, or answering 5xx
    if isinstance(exc, OSError) and any(marker in str(exc) for marker in OBJECT_STORE_MARKERS):
        return True  # object storage unreachable or throttling (pyarrow's S3/GCS/Azure file systems)
    return type(exc).__name__ in ("OperationalError", "EndpointConnectionError")


#: What pyarrow's object-store file systems say when the store is unreachable, throttles or is briefly down.
OBJECT_STORE_MARKERS = ("NETWORK_CONNECTION", "Couldn't connect", "Timeout was reached", "SLOW_DOWN",
                        "SERVICE_UNAVAILABLE", "INTERNAL_FAILURE", "REQUEST_TIMEOUT", "Connection reset",
                        "Connection refused")


class StoppedWhileRetrying(Exception):
    """The job was asked to stop while it waited out a transient fault (nothing was in flight)."""


class TransientRetry:
    """Runs an action again while it fails transiently, until ``timeout_ms`` passed without a success.

    ``timeout_ms``: -1 retries forever, 0 never retries. ``stop`` (an Event) cuts a wait short: a job
    asked to stop does not sit out a backoff first.
    """

    def __init__(self, timeout_ms: int, max_delay_ms: int, stop: threading.Event | None = None):
        self.timeout_ms = timeout_ms
        self.max_delay_ms = max(RETRIES_DELAY_MIN_MS, max_delay_ms)
        self.stop = stop or threading.Event()

    def call(self, action: Callable[[], T], what: str) -> T:
        """``action()``; retried on transient errors; ConnectException naming ``what`` when it gives up.

        One line when the fault is met and one when it is over, however many attempts lie between
        (each of them at DEBUG): a broker down for minutes does not fill the log.
        """
        began = time.monotonic()
        attempt = 0
        while True:
            try:
                result = action()
            except Exception as exc:
                if not transient(exc):
                    raise
                waited = time.monotonic() - began
                if self._given_up(waited):
                    raise ConnectException(
                        f"{what} failed for {waited:.0f}s on a transient error, beyond "
                        f"icefloe.transient.retry-timeout-ms={self.timeout_ms}: {exc}") from exc
                delay = self._delay(attempt)
                attempt += 1
                if attempt == 1:
                    log.warning("%s failed (%s); retrying with backoff %s", what, exc, self._for_how_long())
                else:
                    log.debug("%s failed again (%s); attempt %d in %.1fs", what, exc, attempt + 1, delay)
                if self.stop.wait(delay):
                    raise StoppedWhileRetrying(f"Stop requested while waiting to retry: {what} failed ({exc})") from exc
                continue
            if attempt:
                log.warning("%s succeeded again after %.0fs and %d failed attempt(s): the fault is over", what,
                            time.monotonic() - began, attempt)
            return result

    def _for_how_long(self) -> str:
        if self.timeout_ms < 0:
            return "until it succeeds (icefloe.transient.retry-timeout-ms=-1)"
        return f"for up to {self.timeout_ms / 1000:.0f}s (icefloe.transient.retry-timeout-ms)"

    def _given_up(self, waited_seconds: float) -> bool:
        return self.timeout_ms >= 0 and waited_seconds * 1000 >= self.timeout_ms

    def _delay(self, attempt: int) -> float:
        return backoff_ms(attempt + 1, self.max_delay_ms) / 1000
