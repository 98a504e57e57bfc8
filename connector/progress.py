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
    from connector.channel.coordinator import CycleReport

log = logging.getLogger(__name__)

MB = 1_000_000


@dataclass
class TopicProgress:
    total: int  # offsets from the resume points to the target
    done: int = 0
    bytes_read: int = 0


@dataclass
class Progress:
    """Progress of one catch-up towards ``target``, cycle by cycle."""

    start: Mapping[TopicPartition, int]
    target: Mapping[TopicPartition, int]
    bar: Any = None  # a rich Progress when drawing on a terminal
    began: float = field(default_factory=time.monotonic)
    topics: dict[str, TopicProgress] = field(default_factory=dict)
    _reached: dict[TopicPartition, int] = field(default_factory=dict)
    _bar_tasks: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for tp, end in self.target.items():
            first = min(self.start.get(tp, end), end)
            self._reached[tp] = first
            self.topics.setdefault(tp[0], TopicProgress(0)).total += end - first
        if self.bar is not None:
            for topic, state in sorted(self.topics.items()):
                self._bar_tasks[topic] = self.bar.add_task(topic, total=max(state.total, 1), mb="0.0")

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
            if self.bar is not None:
                state = self.topics[topic]
                self.bar.update(self._bar_tasks[topic], completed=state.done, mb=f"{state.bytes_read / MB:.1f}")

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
