"""What every typed batch form shares: the registry, and the rules of Structs held column-wise.

A *typed* view's :class:`~smt.batch.view.Values` carry ``schema``: the Connect
STRUCT schema every non-null row has (the batch was decoded with one registry
schema, say). The array is a struct array in the representation
``converters/batch/typed.py`` reads: INT8/16/32 as int32, Date as int32 days,
Time as int32 milliseconds of the day, Timestamp as int64 milliseconds, STRUCT
as struct, ARRAY as list. A null row is a tombstone (per record its value *and*
schema are null, so the SMTs take their schemaless branch for it) where the
view's ``tombstone`` column says so; other null rows are nulls ExtractField took
out of Structs, which keep the schema, and an SMT that checks a schema whatever
the value (TimestampConverter, SetSchemaMetadata) checks theirs too
(:meth:`~smt.batch.view.RecordBatchView.carries_schema`).

Each typed form follows the SMT's ``apply_with_schema``. The new schema comes
from the SMT's own schema code (``updated_schema``, with its cache), so it is
exactly the per-record one, including the errors it raises; the values are
moved column by column. Where the per-record SMT would raise, or where its
result could differ (a null in a field with a default, which ``Struct.get``
replaces), the form declines with a reason. Filter, RegexRouter and
TimestampRouter never look at values: their schemaless forms serve typed views
unchanged.

A typed form is registered here (:func:`register_typed`) for the exact class of the per-record SMT it
follows, in the SMT's own module of ``smt.batch`` (``insert_field``, ``cast``, ...), beside its schemaless
form; :mod:`smt.batch.forms` finds them all.
"""

from __future__ import annotations

import abc
from typing import Callable, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import DataException, SchemaBuilderException
from connector.api.schema import Field, Schema, Type
from smt.batch.base import BatchTransform, FormRegistry, NullPassingForm
from smt.batch.view import RecordBatchView, Values, make_struct

#: The forms for typed views (Structs with a schema), by the exact class of the SMT they follow.
TYPED_FORMS = FormRegistry()
register_typed = TYPED_FORMS.register


def struct_fields(values: Values, purpose: str, with_defaults: bool = True) -> tuple[Schema, dict[str, pa.Array]]:
    """(the STRUCT schema, its fields' columns); Declined if the values are not Structs.

    ``with_defaults``: the SMT reads fields with ``Struct.get`` (its ``replace.null.with.default``),
    so a null in a field with a default declines.
    """
    schema = values.schema
    if schema is None or schema.type is not Type.STRUCT or not pa.types.is_struct(values.array.type):
        raise Declined(f"{purpose}: values are not Structs")
    array = values.array
    names = [array.type.field(i).name for i in range(array.type.num_fields)]
    columns = dict(zip(names, array.flatten()))  # null where the Struct is null
    if [f.name for f in schema.fields()] != names:
        raise Declined(f"{purpose}: the columns do not follow the schema")
    if with_defaults:
        check_no_hidden_defaults(schema, columns, array)
    return schema, columns


def check_no_hidden_defaults(schema: Schema, columns: dict[str, pa.Array], array: pa.Array) -> None:
    """Per record, ``Struct.get`` turns a null into the field's default: decline where that would happen."""
    present = array.is_valid()
    for field in schema.fields():
        column = columns[field.name]
        if field.schema.default is not None and column.null_count and \
                pc.any(pc.and_(column.is_null(), present)).as_py():
            raise Declined(f"a null where field {field.name} has a default")


def check_nulls_keep_schema(view: RecordBatchView, updated: Schema) -> None:
    """Declined where nulls with a schema would keep the old one beside values given ``updated``.

    The SMTs that pass a null value through unchanged (Cast, InsertField, ...) leave it its schema,
    and one view holds one schema: a later stage that checks the schema of a null (TimestampConverter,
    ExtractField) would read the wrong one.
    """
    if updated != view.value.schema and view.has_nulls_with_schema():
        raise Declined("nulls keeping their schema beside values with the new one")


def null_mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None


def typed_view(view: RecordBatchView, schema: Schema, names: list[str], arrays: list[pa.Array],
               mask: pa.Array | None) -> RecordBatchView:
    """``view`` with Struct values of ``schema`` made of these columns (null rows where ``mask``)."""
    struct = make_struct(names, arrays, view.num_rows, mask)
    return view.with_value(Values(struct, schema=schema))


def fields_converted(view: RecordBatchView, updated: Schema, purpose: str, with_defaults: bool,
                     convert: Callable[[Field, pa.Array], pa.Array]) -> RecordBatchView:
    """``view`` with Structs of ``updated`` that have the old ones' fields, each column through ``convert``.

    Cast and TimestampConverter: ``updated`` names the same fields in the same order, some of another type.
    """
    schema, columns = struct_fields(view.value, purpose, with_defaults)
    arrays = [convert(field, columns[field.name]) for field in schema.fields()]
    return typed_view(view, updated, list(columns), arrays, null_mask(view.value.array))


def schema_of(build: Callable[[Schema], Schema], schema: Schema, what: str) -> Schema:
    """The SMT's own new schema for ``schema``; Declined where building it fails (as it does per record)."""
    try:
        return build(schema)
    except SchemaBuilderException as exc:  # e.g. a field name twice: the per-record SMT fails the same way
        raise Declined(f"{what} fails for the schema") from exc
    except DataException as exc:  # e.g. a default value the SMT cannot convert
        raise Declined(f"{what} fails for the schema ({type(exc).__name__})") from exc


class StructRewrite(NullPassingForm):
    """The typed form of an SMT that makes each Struct anew, of its new schema, from the old Struct's fields.

    InsertField, ReplaceField and Flatten: as their ``apply_with_schema``, the new schema is the SMT's own
    (:func:`schema_of`) and the new Structs are null where the old ones are; :meth:`new_columns` says what
    each field holds.
    """

    #: The SMT's ``PURPOSE`` (as its errors name it), and what building its schema is, for a reason.
    purpose: ClassVar[str]
    building: ClassVar[str]

    def apply_to_values(self, view: RecordBatchView) -> RecordBatchView:
        schema, columns = struct_fields(view.value, self.purpose)
        updated = schema_of(self.transformation.updated_schema, schema, self.building)
        check_nulls_keep_schema(view, updated)
        arrays = self.new_columns(view, columns, updated)
        return typed_view(view, updated, [f.name for f in updated.fields()], arrays, null_mask(view.value.array))

    @abc.abstractmethod
    def new_columns(self, view: RecordBatchView, columns: dict[str, pa.Array], updated: Schema) -> list[pa.Array]:
        """The columns of ``updated``'s fields, in order, from ``columns`` (those of the old Structs' fields)."""


class SchemaReadingForm(BatchTransform):
    """The typed form of an SMT that reads the schema of a null value too (TimestampConverter, SetSchemaMetadata).

    Tombstones have none: they are returned unchanged, as the SMT's schemaless branch leaves them. Values
    without a schema decline; the others go to :meth:`apply_with_schema`, nulls that keep a schema included.
    """

    #: The SMT's name, for the reason to decline.
    smt_name: ClassVar[str]

    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        if not view.carries_schema():
            return view  # tombstones stay as they are
        schema = view.value.schema
        if schema is None:
            raise Declined(f"{self.smt_name}: values without a schema")
        return self.apply_with_schema(view, schema)

    @abc.abstractmethod
    def apply_with_schema(self, view: RecordBatchView, schema: Schema) -> RecordBatchView:
        """The transformation of values that all have ``schema`` (or are nulls keeping it)."""


def plain(array: pa.Array) -> pa.Array:
    """``array`` without dictionary encoding (Avro enums are read as dictionaries of strings)."""
    return array.dictionary_decode() if pa.types.is_dictionary(array.type) else array
