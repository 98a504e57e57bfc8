"""Property tests: the batch SMT chain gives what the per-record chain gives, record for record.

For random batches of schemaless JSON records (random keys and kinds,
nested objects and arrays, nulls, absent keys, tombstones, keys that change
kind) and random chains of the SMTs that have batch forms (with predicates,
negated or not), the batch chain either declines, or yields the same records
(offset, topic and value) in the same order as the per-record chain, values
compared modulo null-valued keys (see ``smt.batch.view``). When the
per-record chain fails, the batch chain must decline.
"""

from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings

from tests.smt_batch.harness import assert_batch_equals_per_record
from tests.smt_batch.strategies import (
    _cast,
    _flatten,
    _insert,
    _mask,
    _replace,
    _timestamp_converter,
    chains,
    records,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(config=chains(), batch=records())
def test_batch_chain_equals_per_record_chain(config, batch):
    outcome = assert_batch_equals_per_record(config, batch)
    event(outcome)


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=chains(stages=[_insert, _replace, _mask, _cast, _timestamp_converter, _flatten], max_stages=2),
       batch=records())
def test_field_smts_equal_per_record(config, batch):
    """The field-level SMTs alone (more examples reach the interesting cases)."""
    event(assert_batch_equals_per_record(config, batch))
