"""One local Spark session shared by the whole test run (it takes seconds to start)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from connector.spark.session import build_session

    session = build_session("icefloe-tests", {
        "spark.master": "local[2]",
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.enabled": "false",
    })
    yield session
    session.stop()
