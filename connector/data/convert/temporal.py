"""Dates, times and timestamps as the Java sink reads them, as Iceberg's integers.

Results are the physical Iceberg values: days since the epoch (date),
microseconds of the day (time) and microseconds since the epoch (timestamp,
UTC for ``timestamptz``). Working on integers keeps the full range Iceberg
allows and lets Arrow build columns without ``datetime`` objects.

Accepted text (``java.time`` ISO formats, as the sink parses them):

* date: ``yyyy-MM-dd``;
* time: ``HH:mm[:ss[.fffffffff]]``;
* timestamp: ``yyyy-MM-dd'T'HH:mm[:ss[.f...]]`` (``T``, ``t`` or a space) with an
  optional offset ``Z``, ``+HH``, ``+HHmm`` or ``+HH:mm``. Without an offset a
  ``timestamptz`` is UTC; a ``timestamp`` ignores any offset (wall-clock time).

Digits beyond microseconds are truncated, as Iceberg truncates nanoseconds.
The same grammar drives the vectorized parser used for Arrow string columns,
so both paths accept exactly the same strings.
"""

from __future__ import annotations

import datetime as _dt
import re

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.errors import DataException

MICROS_PER_SECOND = 1_000_000
MICROS_PER_DAY = 86_400 * MICROS_PER_SECOND
_EPOCH_ORDINAL = _dt.date(1970, 1, 1).toordinal()
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_NAIVE = _dt.datetime(1970, 1, 1)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# Shared by the scalar (Python re) and vectorized (RE2) parsers: no look-arounds.
_YEAR = r"(000[1-9]|00[1-9]\d|0[1-9]\d\d|[1-9]\d\d\d)"
_DATE = _YEAR + r"-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
_TIME = r"([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.(\d{0,9}))?)?"
_OFFSET = r"(Z|[+-](?:(?:0\d|1[0-7])(?::?[0-5]\d)?|18(?::?00)?))"
DATE_PATTERN = "^" + _DATE + "$"
TIME_PATTERN = "^" + _TIME + "$"
TIMESTAMP_PATTERN = "^" + _DATE + "[Tt ]" + _TIME + _OFFSET + "?$"

_DATE_RE = re.compile(DATE_PATTERN)
_TIME_RE = re.compile(TIME_PATTERN)
_TIMESTAMP_RE = re.compile(TIMESTAMP_PATTERN)


# --- text ------------------------------------------------------------------------


def _days(year: str, month: str, day: str, text: str) -> int:
    try:
        return _dt.date(int(year), int(month), int(day)).toordinal() - _EPOCH_ORDINAL
    except ValueError as e:
        raise DataException(f"Text '{text}' could not be parsed: {e}") from None


def _time_micros(hour: str, minute: str, second: str | None, fraction: str | None) -> int:
    seconds = int(hour) * 3600 + int(minute) * 60 + int(second or 0)
    micros = int((fraction or "")[:6].ljust(6, "0"))
    return seconds * MICROS_PER_SECOND + micros


def _offset_seconds(offset: str | None) -> int:
    if not offset or offset == "Z":
        return 0
    digits = offset[1:].replace(":", "")
    seconds = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60
    return -seconds if offset[0] == "-" else seconds


def parse_date_days(text: str) -> int:
    """``LocalDate.parse``: ``yyyy-MM-dd`` → days since 1970-01-01."""
    match = _DATE_RE.match(text)
    if match is None:
        raise DataException(f"Text '{text}' could not be parsed as a date")
    year, month, day = match.groups()
    return _days(year, month, day, text)


def parse_time_micros(text: str) -> int:
    """``LocalTime.parse``: ``HH:mm[:ss[.f]]`` → microseconds of the day."""
    match = _TIME_RE.match(text)
    if match is None:
        raise DataException(f"Text '{text}' could not be parsed as a time")
    return _time_micros(*match.groups())


def parse_timestamp_micros(text: str, adjust_to_utc: bool) -> int:
    """A timestamp string → microseconds since the epoch (see the module doc)."""
    match = _TIMESTAMP_RE.match(text)
    if match is None:
        raise DataException(f"Text '{text}' could not be parsed as a timestamp")
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    micros = _days(year, month, day, text) * MICROS_PER_DAY + _time_micros(hour, minute, second, fraction)
    if adjust_to_utc:
        micros -= _offset_seconds(offset) * MICROS_PER_SECOND
    return micros


# --- Python values -----------------------------------------------------------------


def date_days(value: _dt.date) -> int:
    """Days since the epoch of a ``date`` (a ``datetime`` counts as ``java.util.Date``)."""
    if isinstance(value, _dt.datetime):
        millis = datetime_millis(value)
        days = abs(millis) // 86_400_000  # Java's integer division truncates toward zero
        return days if millis >= 0 else -days
    return value.toordinal() - _EPOCH_ORDINAL


def time_micros(value: _dt.time) -> int:
    """Microseconds of the day of a ``time`` (any tzinfo is ignored, like ``LocalTime``)."""
    return (value.hour * 3600 + value.minute * 60 + value.second) * MICROS_PER_SECOND + value.microsecond


def datetime_micros(value: _dt.datetime, adjust_to_utc: bool) -> int:
    """Microseconds since the epoch of a ``datetime``.

    Aware values are instants (``OffsetDateTime``): UTC for ``timestamptz``,
    their own wall-clock time for ``timestamp``. Naive values are wall-clock
    times (``LocalDateTime``), taken as UTC for ``timestamptz``.
    """
    if value.tzinfo is None:
        return (value - _EPOCH_NAIVE) // _dt.timedelta(microseconds=1)
    if adjust_to_utc:
        return (value - _EPOCH) // _dt.timedelta(microseconds=1)
    return (value.replace(tzinfo=None) - _EPOCH_NAIVE) // _dt.timedelta(microseconds=1)


def datetime_millis(value: _dt.datetime) -> int:
    """Epoch milliseconds of a ``datetime`` (naive = UTC), as ``Date.getTime()``."""
    return datetime_micros(value, adjust_to_utc=True) // 1000


def checked_micros(micros: int) -> int:
    """``micros`` if it fits Iceberg's 64-bit timestamp, else a DataException."""
    if not _INT64_MIN <= micros <= _INT64_MAX:
        raise DataException(f"Timestamp out of range: {micros} microseconds")
    return micros


def checked_time_micros(micros: int) -> int:
    """``micros`` if it is a valid time of day (``LocalTime.ofNanoOfDay``), else a DataException."""
    if not 0 <= micros < MICROS_PER_DAY:
        raise DataException(f"Invalid time of day: {micros} microseconds")
    return micros


# --- Arrow string columns --------------------------------------------------------------


def _all_match(strings: pa.Array, pattern: str) -> bool:
    matches = pc.match_substring_regex(strings, pattern)
    return matches.null_count == strings.null_count and pc.all(matches).as_py() is not False


def parse_timestamp_array(strings: pa.Array, adjust_to_utc: bool) -> pa.Array | None:
    """Vectorized :func:`parse_timestamp_micros` over an Arrow string column.

    Returns ``timestamp[us]`` (UTC-zoned if ``adjust_to_utc``), or None when some
    string needs the scalar parser (no match, or an empty fraction), so that the
    caller can fall back and report the same result or error as the scalar path.
    """
    if not _all_match(strings, TIMESTAMP_PATTERN):
        return None
    if pc.any(pc.match_substring_regex(strings, r"\.(\D|$)")).as_py():
        return None
    text = pc.utf8_replace_slice(strings, start=10, stop=11, replacement="T")
    text = pc.replace_substring_regex(text, pattern=r"(\.\d{6})\d+", replacement=r"\1")
    has_offset = pc.match_substring_regex(text, _OFFSET + "$")
    if adjust_to_utc:
        utc_suffix = pa.scalar("Z", type=text.type)
        text = pc.if_else(
            has_offset, text, pc.binary_join_element_wise(text, utc_suffix, pa.scalar("", type=text.type))
        )
        target = pa.timestamp("us", tz="UTC")
    else:
        text = pc.replace_substring_regex(text, pattern=_OFFSET + "$", replacement="")
        target = pa.timestamp("us")
    try:
        return text.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def parse_date_array(strings: pa.Array) -> pa.Array | None:
    """Vectorized :func:`parse_date_days` (``date32``), or None to fall back."""
    if not _all_match(strings, DATE_PATTERN):
        return None
    try:
        return strings.cast(pa.date32())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
