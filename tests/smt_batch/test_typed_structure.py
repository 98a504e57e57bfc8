"""Flatten$Value and SetSchemaMetadata$Value on typed values: the per-record values and schemas, or a decline."""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st

from connector.api.logical import Date
from connector.api.schema import Schema, SchemaBuilder
from tests.smt_batch.typed_harness import NULLS, check

PLACE = SchemaBuilder.struct().name("Place").optional().field("city", Schema.STRING_SCHEMA) \
    .field("zip", SchemaBuilder.int32().optional().default_value(7).build()).build()
SCHEMA = SchemaBuilder.struct().name("Row").version(1).field("id", Schema.INT64_SCHEMA) \
    .field("where", PLACE).field("day", Date.builder().optional().build()) \
    .field("where.city", Schema.OPTIONAL_STRING_SCHEMA) \
    .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build()).build()
places = st.none() | st.fixed_dictionaries({"city": st.text(max_size=3), "zip": st.none() | st.integers(0, 99)})
rows = st.fixed_dictionaries({"id": st.integers(0, 9), "where": places, "day": st.none() | st.integers(-5, 5),
                              "where.city": st.none() | st.just("c"), "tags": st.none() | st.lists(st.just("t"))})


@settings(max_examples=200, deadline=None)
@given(delimiter=st.sampled_from([".", "_", "__"]), values=st.lists(NULLS | rows, min_size=1, max_size=5))
def test_flatten_equals_per_record(delimiter, values):
    event(check("Flatten$Value", {"delimiter": delimiter}, SCHEMA, values))


def test_flatten_names_that_collide_decline():
    row = {"id": 1, "where": {"city": "a", "zip": 1}, "day": None, "where.city": None, "tags": None}
    assert check("Flatten$Value", {}, SCHEMA, [row]).startswith("declined: flattening the schema fails")
    assert check("Flatten$Value", {"delimiter": "_"}, SCHEMA, [row, None]) == "ok"


@settings(max_examples=100, deadline=None)
@given(config=st.sampled_from([{"schema.name": "renamed"}, {"schema.version": "4"},
                               {"schema.name": "x", "schema.version": "2", "replace.null.with.default": "false"}]),
       values=st.lists(NULLS | rows, min_size=1, max_size=5))
def test_set_schema_metadata_equals_per_record(config, values):
    event(check("SetSchemaMetadata$Value", config, SCHEMA, values))


def test_set_schema_metadata_of_a_primitive_value():
    assert check("SetSchemaMetadata$Value", {"schema.name": "n"}, Schema.OPTIONAL_INT64_SCHEMA, [1, None]) == "ok"
