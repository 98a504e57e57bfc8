"""Shared helpers for the Kafka client tests."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Fresh topic names, so tests sharing the session broker never meet."""

    def make(label: str = "t") -> str:
        return f"{request.node.name[:40]}-{label}-{uuid.uuid4().hex[:8]}".replace("[", "-").replace("]", "")

    return make
