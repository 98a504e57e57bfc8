"""How far a job has read towards its target offsets: a log line per cycle, and a bar on a terminal.

Per topic: records read of the backlog, megabytes, rate and time left. The
backlog is what lay between where each partition resumed and the target (the
end offsets seen at the start of a ``--until-caught-up`` run, or of the
current catch-up in continuous mode); offsets are counted, so compacted
topics and transaction markers make the figures an upper bound.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from connector.api.record import TopicPartition

if TYPE_CHECKING:
    from connector.commit.coordinator import CycleReport

log = logging.getLogger(__name__)

MB = 1_000_000


@dataclass
class TopicProgress:
    total: int  # offsets from the resume points to the target
    done: int = 0
    bytes_read: int = 0


class TopicBars:
    """One bar per topic for the whole job: each catch-up (every cycle in continuous mode) adds its
    backlog to the bar's total, so a continuous job keeps one line per topic instead of a new bar
    per cycle."""

    def __init__(self, bar: Any):
        self.bar = bar
        self._tasks: dict[str, Any] = {}
        self._done: dict[str, int] = {}  # records of earlier catch-ups
        self._bytes: dict[str, int] = {}

    def begin(self, totals: Mapping[str, int]) -> None:
        for topic, total in sorted(totals.items()):
            if topic not in self._tasks:
                self._done[topic] = self._bytes[topic] = 0
                self._tasks[topic] = self.bar.add_task(topic, total=total, mb="0.0")
            else:
                self.bar.update(self._tasks[topic], total=self._done[topic] + total, completed=self._done[topic])

    def show(self, topic: str, done: int, bytes_read: int) -> None:
        self.bar.update(self._tasks[topic], completed=self._done[topic] + done,
                        mb=f"{(self._bytes[topic] + bytes_read) / MB:.1f}")

    def end(self, topics: Mapping[str, "TopicProgress"]) -> None:
        for topic, state in topics.items():
            self._done[topic] += state.done
            self._bytes[topic] += state.bytes_read


@dataclass
class Progress:
    """Progress of one catch-up towards ``target``, cycle by cycle, and within a cycle as its tasks read."""

    start: Mapping[TopicPartition, int]
    target: Mapping[TopicPartition, int]
    bars: TopicBars | None = None  # on a terminal
    began: float = field(default_factory=time.monotonic)
    topics: dict[str, TopicProgress] = field(default_factory=dict)
    _reached: dict[TopicPartition, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for tp, end in self.target.items():
            first = min(self.start.get(tp, end), end)
            self._reached[tp] = first
            self.topics.setdefault(tp[0], TopicProgress(0)).total += end - first
        if self.bars is not None:
            self.bars.begin({topic: state.total for topic, state in self.topics.items()})

    def advance(self, report: "CycleReport") -> None:
        """Count a committed cycle; log the line and move the bar."""
        for tp, offset in report.next_offsets.items():
            if tp not in self._reached:
                continue
            moved = max(0, min(offset, self.target[tp]) - self._reached[tp])
            self._reached[tp] += moved
            self.topics[tp[0]].done += moved
        for topic, size in report.bytes_read.items():
            if topic in self.topics:
                self.topics[topic].bytes_read += size
        for topic in sorted(self.topics):
            log.info("Progress %s", self.describe(topic))
            if self.bars is not None:
                self.bars.show(topic, self.topics[topic].done, self.topics[topic].bytes_read)

    def live(self, reached: Mapping[TopicPartition, int], bytes_read: Mapping[str, int]) -> None:
        """Move the bar to where the running cycle's tasks say they are (not logged: the commit is)."""
        if self.bars is None:
            return
        ahead: dict[str, int] = {}
        for tp, offset in reached.items():
            if tp in self._reached:
                moved = max(0, min(offset, self.target[tp]) - self._reached[tp])
                ahead[tp[0]] = ahead.get(tp[0], 0) + moved
        for topic, state in self.topics.items():
            if topic in ahead or topic in bytes_read:
                self.bars.show(topic, state.done + ahead.get(topic, 0), state.bytes_read + bytes_read.get(topic, 0))

    def finish(self) -> None:
        """The catch-up is over: its figures become the bars' base for the next one."""
        if self.bars is not None:
            self.bars.end(self.topics)

    def describe(self, topic: str) -> str:
        state = self.topics[topic]
        elapsed = max(time.monotonic() - self.began, 1e-9)
        rate = state.done / elapsed
        left = state.total - state.done
        eta = f"{left / rate:.0f}s" if rate > 0 and left > 0 else ("done" if left <= 0 else "unknown")
        return (f"{topic}: {state.done:,}/{state.total:,} records, {state.bytes_read / MB:.1f} MB, "
                f"{rate:,.0f} records/s, ETA {eta}")

    @property
    def caught_up(self) -> bool:
        return all(self._reached[tp] >= end for tp, end in self.target.items())


def terminal_bar(console: Any) -> Any:
    """A rich progress bar per topic (records, MB, rate, time left), drawn on ``console``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeRemainingColumn
    from rich.text import Text

    class RecordRate(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text(f"{task.speed:,.0f} records/s" if task.speed else "")

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[mb]} MB"), RecordRate(), TimeRemainingColumn(),
                    console=console, transient=False)
