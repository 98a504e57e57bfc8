"""The session-scoped ``kafka_broker`` fixture: one embedded Tansu broker per test run.

The broker itself and the data helpers live in :mod:`connector.embedded.tansu`
(the demo uses them too); they are re-exported here for the tests.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connector.embedded.tansu import BrokerStartError, TansuBroker, create_topic, produce  # noqa: F401


@pytest.fixture(scope="session")
def kafka_broker(request: pytest.FixtureRequest) -> Iterator[TansuBroker]:
    """One Tansu broker for the whole test session.

    The broker is stopped even when startup or tests fail; its log is
    kept (path in the broker's ``log_path``) only if some test failed.
    """
    broker = TansuBroker()
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()
        if not request.session.testsfailed:
            broker.remove_log()
