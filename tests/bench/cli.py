"""What a user times: ``icefloe run CONFIG --until-caught-up`` from the command to its exit.

Each run is a fresh process (Spark, Python workers and imports included) on a
fresh table. The time ends when the command exits (a Spark JVM it started
stops itself after that; the next run waits for it to be gone). The peak
memory is the largest sum of resident set sizes over the command's whole
process tree (driver, Spark JVM, Python workers), sampled every 100 ms from
``/proc`` (Linux).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class CliRun:
    seconds: float
    records: int
    peak_rss_mb: float


def run_cli(props: dict[str, str], bootstrap: str, work: Path, spark_conf: dict[str, str] | None = None) -> CliRun:
    """Run the connector ``props`` until caught up, in a new process; fail loudly unless it exits 0."""
    config = work / f"{props['name']}.json"
    config.write_text(json.dumps({"name": props["name"], "config": {k: v for k, v in props.items() if k != "name"}}))
    command = [sys.executable, "-m", "connector.cli", "run", str(config), "--bootstrap-servers", bootstrap,
               "--until-caught-up", "--quiet"]
    for key, value in (spark_conf or {}).items():
        command += ["--spark-conf", f"{key}={value}"]
    began = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    peak = _PeakRss(process.pid)
    peak.start()
    drained: dict[str, str] = {}
    readers = [threading.Thread(target=lambda name=name, stream=stream: drained.update({name: stream.read()}))
               for name, stream in (("out", process.stdout), ("err", process.stderr))]
    for reader in readers:
        reader.start()
    process.wait(timeout=1800)
    seconds = time.perf_counter() - began  # the command's exit, as `time icefloe run ...` shows it
    for reader in readers:  # the Spark JVM, if one started, stops itself after the command exited and
        reader.join()       # holds the pipes until then: the next run starts only once it is gone
    out, err = drained["out"], drained["err"]
    peak.stop()
    if process.returncode != 0:
        raise SystemExit(f"{props['name']}: icefloe run exited {process.returncode}:\n{err[-3000:]}")
    summary = json.loads(out.strip().splitlines()[-1])
    return CliRun(seconds, summary["records_read"], peak.peak_bytes / 1e6)


def time_script(arguments: list[str]) -> float:
    """Seconds from starting ``python ARGUMENTS`` to its exit; fails loudly unless it exits 0."""
    return run_script(arguments)[0]


def run_script(arguments: list[str]) -> tuple[float, str]:
    """(seconds from starting ``python ARGUMENTS`` to its exit, what it printed); fails loudly unless it exits 0."""
    began = time.perf_counter()
    run = subprocess.run([sys.executable, *arguments], capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - began
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(arguments)} exited {run.returncode}:\n{run.stderr[-3000:]}")
    return seconds, run.stdout


class _PeakRss(threading.Thread):
    """Samples the resident memory of a process and all its descendants."""

    def __init__(self, root: int):
        super().__init__(daemon=True)
        self.root = root
        self.peak_bytes = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(0.1):
            self.peak_bytes = max(self.peak_bytes, _tree_rss(self.root))

    def stop(self) -> None:
        self._done.set()
        self.join()


def _tree_rss(root: int) -> int:
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = int(fields[21]) * PAGE
    tree = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return sum(rss.get(pid, 0) for pid in tree)
