"""Building the Spark session icefloe runs on.

Settings come from ``--spark-conf KEY=VALUE`` and Spark's own mechanisms
(``SPARK_*`` environment variables, ``spark-defaults.conf``); the master is
``local[*]`` unless one of those names another.
"""

from __future__ import annotations

import os
import sys
from typing import Mapping

#: JVM options of ``icefloe run``'s driver: it schedules tasks and moves small commit messages, so the
#: JIT's first tier and the serial collector cost nothing there and start it about a second sooner.
QUICK_START_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

DEFAULTS = {
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    # Python worker reuse keeps executors' imports warm; turning it off costs ~3x.
    "spark.python.worker.reuse": "true",
    # Executors fork their Python workers from a daemon that has imported a task's modules already.
    "spark.python.daemon.module": "connector.spark.worker_daemon",
}


def build_session(app_name: str, conf: Mapping[str, str] | None = None, *, quick_start: bool = False):
    """A SparkSession for ``app_name`` (imports pyspark lazily: ``connector`` must stay light).

    ``quick_start``: give the driver JVM :data:`QUICK_START_JAVA_OPTIONS` unless
    ``spark.driver.extraJavaOptions`` is set (for a driver whose data never flows
    through the JVM; the Spark Data Source formats do not use it).
    """
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    settings = _settings(conf, quick_start)
    for key, value in settings.items():
        builder = builder.config(key, value)
    _launch_driver_jvm_in_own_session(settings)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get("ICEFLOE_SPARK_LOG_LEVEL", "WARN"))
    return session


def build_context(app_name: str, conf: Mapping[str, str] | None = None, *, quick_start: bool = False):
    """A SparkContext for ``app_name``: all that ``icefloe run`` and the REST worker need.

    Their tasks are RDD jobs (:mod:`connector.spark.runner`); a SparkSession on
    top would initialise Spark SQL for nothing, about 3 s of a cold JVM's start
    (measured: context 1.4 s, session 4.4 s). A context already running in this
    process (a notebook's, a test's) is returned as it is. ``quick_start`` as in
    :func:`build_session`.
    """
    from pyspark import SparkConf, SparkContext

    settings = _settings(conf, quick_start)
    _launch_driver_jvm_in_own_session(settings)
    context = SparkContext.getOrCreate(SparkConf().setAppName(app_name).setAll(list(settings.items())))
    context.setLogLevel(os.environ.get("ICEFLOE_SPARK_LOG_LEVEL", "WARN"))
    return context


def _settings(conf: Mapping[str, str] | None, quick_start: bool) -> dict[str, str]:
    """icefloe's defaults under the caller's ``conf``, with the master and the process environment settled."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Executors' Python must be the driver's (same venv, same packages) unless told otherwise.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    conf = dict(conf or {})
    if quick_start:
        conf.setdefault("spark.driver.extraJavaOptions", QUICK_START_JAVA_OPTIONS)
    if "spark.master" not in conf and not os.environ.get("MASTER") and _defaults_master() is None:
        conf["spark.master"] = "local[*]"
    global _building_for
    _building_for = conf.get("spark.master") or os.environ.get("MASTER") or _defaults_master()
    return {**DEFAULTS, **conf}


#: the master this process last built (or began building) its session for: one Spark per process
_building_for: str | None = None


def configured_master(conf: Mapping[str, str] | None = None) -> str:
    """The master a session built with ``conf`` runs on: ``conf``'s, else the one this process's session
    is being built for (``icefloe serve --spark-conf``), else ``MASTER``, else spark-defaults.conf's,
    else ``local[*]`` (as :func:`build_context` settles it)."""
    conf = conf or {}
    if "spark.master" in conf:
        return conf["spark.master"]
    return _building_for or os.environ.get("MASTER") or _defaults_master() or "local[*]"


def is_cluster_master(master: str) -> bool:
    """Whether ``master`` runs executors apart from the driver (``spark://``, ``yarn``, ``k8s://``, ...),
    as opposed to ``local``, ``local[N]`` and ``local[*]``, whose tasks share the driver's host."""
    return not master.strip().lower().startswith("local")


def _launch_driver_jvm_in_own_session(settings: Mapping[str, str]) -> None:
    """Start the driver JVM as PySpark would, but in a session (and process group) of its own.

    systemd, Kubernetes and terminals signal a whole process group: in icefloe's
    group the JVM would die at once and the commit in flight with it. Outside it,
    SIGTERM and Ctrl-C reach Python only, which finishes its commit and then
    stops Spark. The JVM still exits if Python dies, as PySpark arranges: it
    watches the pipe on its stdin. Its stdout and stderr are read into icefloe's
    log (:mod:`connector.spark.jvm_output`). A JVM that already runs (a
    notebook's, a test's) is left as it is.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    from connector.spark.jvm_output import forward

    with SparkContext._lock:
        if SparkContext._gateway is not None:
            return
        conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
        # Spark's console output goes to icefloe's log, from the first line (a JVM that fails to start says why)
        read_end, write_end = os.pipe()
        forward(os.fdopen(read_end, "rb"), "console")
        try:
            gateway = launch_gateway(conf, popen_kwargs={"start_new_session": True, "stdout": write_end,
                                                         "stderr": write_end})
        finally:
            os.close(write_end)  # the JVM holds its own copy
        SparkContext._gateway = gateway
        SparkContext._jvm = gateway.jvm


def _defaults_master() -> str | None:
    """The master a spark-defaults.conf in SPARK_CONF_DIR chooses, if any."""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if not conf_dir:
        return None
    path = os.path.join(conf_dir, "spark-defaults.conf")
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        for line in handle:
            words = line.split(None, 1)
            if words[:1] == ["spark.master"] and len(words) == 2:
                return words[1].strip()
    return None



def spark_conf_pairs(pairs: list[str] | None) -> dict[str, str]:
    """``--spark-conf KEY=VALUE`` arguments as Spark settings; a malformed one ends the command, naming it."""
    conf = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"--spark-conf expects KEY=VALUE, got '{pair}'")
        conf[key.strip()] = value.strip()
    return conf
