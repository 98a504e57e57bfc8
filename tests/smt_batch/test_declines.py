"""Batch SMTs decline for named reasons only; anything else is a bug the suite sees (strict mode)."""

from __future__ import annotations

import logging

import pytest

import smt.batch.cast as batch_transforms
import smt.batch.predicates as batch_predicates
from connector.api.declined import STRICT_ENV, UNEXPECTED, Declined
from smt.batch import BatchTransformationChain
from tests.smt_batch.harness import (
    assert_batch_equals_per_record,
    batched,
    chain_of,
    encode,
    per_record,
    raw_batch,
    view_of,
)
from tests.smt_batch.test_transforms import config_of, smt


def declined(stage: dict[str, str], values: list, **batch_options) -> str:
    """The batch chain's reason for declining ``values``; the per-record chain must fail on them."""
    config = config_of(stage)
    batch = raw_batch([encode(v) for v in values], **batch_options)
    assert assert_batch_equals_per_record(config, batch) == "declined"
    assert per_record(chain_of(config), batch)[0] == "error"
    outcome = batched(chain_of(config), batch)
    assert outcome[0] == "declined"
    return outcome[1]


@pytest.mark.parametrize("stage,values,reason", [
    (smt("Cast$Value", spec="s:int32"), [{"s": "12"}, {"s": "12x"}],
     "Cast$Value: Cast of a string that does not parse as the target type"),
    (smt("Cast$Value", spec="s:int8"), [{"s": "300"}],
     "Cast$Value: Cast of a string that does not parse as the target type"),
    (smt("Cast$Value", spec="s:float64"), [{"s": "one"}],
     "Cast$Value: Cast of a string that does not parse as the target type"),
    (smt("Cast$Value", spec="l:int32"), [{"l": [1]}], "Cast$Value: Cast of list values fails"),
    (smt("MaskField$Value", fields="f", replacement="x"), [{"f": 1}],
     "MaskField$Value: MaskField replacement does not parse as a number"),
    (smt("TimestampConverter$Value", field="ts", target_type="unix", format="yyyy-MM-dd"),
     [{"ts": "2024-01-02"}, {"ts": "not a date"}],
     "TimestampConverter$Value: string timestamp does not match the format"),
    (smt("TimestampConverter$Value", field="ts", target_type="string", format="yyyy"),
     [{"ts": 10**17}], "TimestampConverter$Value: timestamp out of the supported range (years 1-9999)"),
    (smt("ExtractField$Value", field="a.b", field_syntax_version="V2"), [{"a": 5}],
     "ExtractField$Value: ExtractField through a non-map value fails"),
])
def test_declines_name_their_reason(stage, values, reason):
    assert declined(stage, values) == reason


def test_a_timestamp_the_router_cannot_format_declines_with_its_reason():
    stage = smt("TimestampRouter", topic_format="${topic}-${timestamp}", timestamp_format="yyyy")
    assert declined(stage, [{"a": 1}], timestamps=[10**17]) == \
        "TimestampRouter: timestamp out of the supported range (years 1-9999)"


def test_values_of_mixed_kinds_are_not_parsed_column_wise():
    batch = raw_batch([encode({"a": 1}), encode({"a": "x"})])
    with pytest.raises(Declined, match="^a key holds values of different JSON kinds$"):
        view_of(batch)


# --- a bug in a batch form is not a reason -------------------------------------------------------

CAST = config_of(smt("Cast$Value", spec="f:int32"))
FLOATS = raw_batch([encode({"f": 1.5}), encode({"f": 2.5})])


def _broken_max_abs(array):
    raise TypeError("injected bug")


def _chain_result(config, batch):
    return BatchTransformationChain.from_chain(chain_of(config)).apply(view_of(batch))


def test_strict_mode_raises_a_bug_in_a_batch_kernel(monkeypatch):
    assert _chain_result(CAST, FLOATS).values() == [{"f": 1}, {"f": 2}]
    monkeypatch.setattr(batch_transforms, "max_abs", _broken_max_abs)
    with pytest.raises(TypeError, match="injected bug"):
        _chain_result(CAST, FLOATS)


def test_without_strict_mode_a_bug_declines_as_unexpected_and_logs_the_trace(monkeypatch, caplog):
    monkeypatch.delenv(STRICT_ENV)
    monkeypatch.setattr(batch_transforms, "max_abs", _broken_max_abs)
    with caplog.at_level(logging.WARNING, logger="connector.api.declined"), pytest.raises(Declined) as info:
        _chain_result(CAST, FLOATS)
    assert info.value.reason == UNEXPECTED
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "transformation 's0' (Cast$Value)" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is TypeError


def test_strict_mode_raises_a_bug_in_a_predicate(monkeypatch):
    config = config_of({**smt("Filter"), "predicate": "p"},
                       predicates={"p": {"type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
                                         "pattern": "orders"}})
    batch = raw_batch([encode({"a": 1})])

    def broken(*args, **kwargs):
        raise TypeError("injected bug")

    monkeypatch.setattr(batch_predicates, "map_distinct", broken)
    with pytest.raises(TypeError, match="injected bug"):
        _chain_result(config, batch)
