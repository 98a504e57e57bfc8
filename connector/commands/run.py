"""``icefloe run``: one connector as one job, from start to exit (also ``icefloe migrate``'s last step)."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from connector.api.errors import ConfigException, ConnectException
from connector.config.sink_config import SinkConfig
from connector.progress import terminal_bar

log = logging.getLogger("icefloe")


def run(config: SinkConfig, args: Any, console: Any = None) -> int:
    """Run the connector as one job until it is caught up (``--until-caught-up``) or stopped; the exit code.

    ``console`` is the terminal's (rich) console when there is one: the job's progress bars are drawn on it.
    """
    from connector.gc_tuning import freeze_startup_objects
    from connector.job import SinkJob, StopSignal
    from connector.spark.on_demand import OnDemandSession
    from connector.spark.runner import SparkTaskRunner, warm_up
    from connector.spark.session import build_context, configured_master, spark_conf_pairs

    stop = StopSignal()
    stop.install()
    metrics = None
    if args.metrics_port is not None:
        from connector.metrics import JobMetrics, start_metrics_server

        try:
            start_metrics_server(args.metrics_port)
        except OSError as exc:
            print(f"Cannot serve metrics on port {args.metrics_port}: {exc}", file=sys.stderr)
            return 2
        metrics = JobMetrics(config.name)
    spark_conf = spark_conf_pairs(args.spark_conf)
    bar = terminal_bar(console) if console is not None else None
    # Spark starts only for a cycle too large for the driver (icefloe.driver.max-records), in the
    # background: a context (~3.5 s of JVM start-up here), then its executors' Python workers (warm_up).
    # The driver meanwhile probes records, creates tables, and reads (icefloe.driver.while-spark-starts).
    feed = _progress_feed() if bar is not None else None
    session = OnDemandSession(
        lambda: warm_up(_feeding(build_context(f"icefloe-{config.name}", spark_conf, quick_start=True), feed)))
    try:
        job = SinkJob(config, SparkTaskRunner(session, master=configured_master(spark_conf)),
                      until_caught_up=args.until_caught_up, stop=stop,
                      progress_bar=bar, metrics=metrics, progress_feed=feed)
        freeze_startup_objects()  # the driver reads records too (small cycles, and while Spark starts)
        if bar is not None:
            with bar:
                summary = job.run()
        else:
            summary = job.run()
    except ConfigException as exc:
        print(f"Invalid configuration: {exc}", file=sys.stderr)
        return 2
    except ConnectException as exc:
        _failed(args, exc)
        return 1
    except Exception as exc:  # noqa: BLE001 - a library's error (the catalog's, ...): one line, not a traceback
        _failed(args, exc, f"{type(exc).__name__}: ")
        return 1
    # Spark is not stopped here: its JVM watches the pipe from this process and, when this process
    # exits, stops the context in its own shutdown hook (temporary files removed). Waiting for
    # SparkContext.stop() would add ~1 s to every run, and every commit is done by now.
    print(json.dumps({"connector": config.name, "cycles": len(summary.cycles),
                      "records_read": summary.records_read,
                      "rows_written": _sum_rows(summary),
                      "dlq_records": sum(sum(c.dlq_records.values()) for c in summary.cycles)}, indent=None))
    return 0


def _progress_feed() -> Any:
    """Where tasks say how far they read (the bars move before the commit); tasks in the driver find it here."""
    import os

    from connector.progress_feed import FEED_ENV, ProgressFeed

    feed = ProgressFeed()
    os.environ[FEED_ENV] = feed.address("127.0.0.1")
    return feed


def _feeding(context: Any, feed: Any) -> Any:
    """``context``, its executors' tasks told where ``feed`` is (set before their Python workers start)."""
    if feed is not None:
        from connector.progress_feed import FEED_ENV

        context.environment[FEED_ENV] = feed.address(context.getConf().get("spark.driver.host") or "127.0.0.1")
    return context


def _failed(args, exc: BaseException, kind: str = "") -> None:
    """The job's last line; with ``--debug``, the traceback before it."""
    if getattr(args, "debug", False):
        log.error("The job failed", exc_info=exc)
    print(f"Job failed: {kind}{exc}", file=sys.stderr)


def _sum_rows(summary) -> dict[str, int]:
    rows: dict[str, int] = {}
    for cycle in summary.cycles:
        for table, count in cycle.rows_written.items():
            rows[table] = rows.get(table, 0) + count
    return rows
