"""Kafka Connect's retry backoff, shared by record-level retries and a job's re-run cycles."""

from __future__ import annotations

import random

#: Connect's first pause between retries (``RetryWithToleranceOperator.RETRIES_DELAY_MIN_MS``).
RETRIES_DELAY_MIN_MS = 300


def backoff_ms(attempt: int, max_delay_ms: float) -> float:
    """The pause before retry number ``attempt`` (1, 2, ...): 300 ms doubling up to ``max_delay_ms``,
    with jitter over its upper half so that retries of many tasks do not move in step."""
    delay = min(RETRIES_DELAY_MIN_MS * 2 ** min(attempt - 1, 30), max_delay_ms)
    return delay / 2 + random.uniform(0, delay / 2)  # noqa: S311 - jitter, not security
