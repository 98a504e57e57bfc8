"""A transformation chain applied to a whole :class:`RecordBatchView` at once.

Mirrors :class:`smt.chain.TransformationChain`: stages in order, each applied
to the records its predicate selects (``predicate is None or negate XOR
test``), records a stage drops removed before the next stage. A stage that
applies to only some rows runs on those rows and the view is put back
together in record order. Given ``records_of`` (the task pipeline's way to
build exact ``SinkRecord``s), a stage without a batch form runs record by
record for that stage only (:class:`~smt.batch.records.RecordStage`).
Values with a Connect schema (decoded Avro, say) take
:meth:`BatchTransformationChain.for_typed_values`: every stage needs a typed
form (:mod:`smt.batch.typed_rules`), since per-record stages would need exact
``Struct``s back and forth.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined, unexpected
from smt.batch.base import BatchTransform
from smt.batch.forms import batch_form, typed_batch_form
from smt.batch.predicates import BatchTest, batch_predicate
from smt.batch.records import RecordsOf, RecordStage, changes_keys_or_headers
from smt.batch.view import RecordBatchView, concat_views


class BatchStage:
    """A stage whose transformation (and predicate) have batch forms."""

    def __init__(self, transform: BatchTransform, test: BatchTest | None, negate: bool, alias: str | None,
                 type_name: str | None = None):
        self.transform = transform
        self.test = test
        self.negate = negate
        self.alias = alias
        # "Cast$Value" of "org.apache.kafka.connect.transforms.Cast$Value": decline reasons name the SMT
        # the same way whatever the alias, so that counts of reasons add up across connectors.
        self.name = (type_name or type(transform.transformation).__name__).rsplit(".", 1)[-1]

    def apply(self, view: RecordBatchView) -> RecordBatchView:
        if self.test is None:
            return self.transform.apply_batch(view)
        selected = self.test(view)
        if self.negate:
            selected = pc.invert(selected)
        count = pc.sum(selected.cast(pa.int64())).as_py() or 0
        if count == 0:
            return view
        if count == view.num_rows:
            return self.transform.apply_batch(view)
        applied = self.transform.apply_batch(view.filter(selected))
        others = view.filter(pc.invert(selected))
        return _interleave(applied, others, selected)


def _interleave(applied: RecordBatchView, others: RecordBatchView, selected: pa.Array) -> RecordBatchView:
    """Rows of ``applied`` (from the selected rows, some maybe dropped) and ``others``, in record order."""
    if applied.num_rows == 0:
        return others
    merged = concat_views([applied, others])
    order = np.argsort(merged.index.to_numpy(zero_copy_only=False), kind="stable")
    return merged.take(pa.array(order))


class BatchTransformationChain:
    """The batch form of a :class:`smt.chain.TransformationChain`."""

    def __init__(self, stages: list[BatchStage | RecordStage], chain: Any = None):
        self.stages = stages
        self.chain = chain

    @classmethod
    def from_chain(cls, chain: Any, records_of: RecordsOf | None = None) -> "BatchTransformationChain | None":
        """The batch form of ``chain``; None if it has none.

        Without ``records_of`` every stage needs a batch form. With it, stages
        without one run record by record, provided at least one stage has a batch
        form and none is known to change keys or headers (the view keeps those
        raw, so such a chain always runs per record).
        """
        stages: list[BatchStage | RecordStage] = []
        for stage in chain.stages:
            batch_stage = _batch_stage(stage)
            if batch_stage is not None:
                stages.append(batch_stage)
            elif records_of is not None and not changes_keys_or_headers(stage):
                stages.append(RecordStage(stage, records_of))
            else:
                return None
        if stages and not any(isinstance(s, BatchStage) for s in stages):
            return None
        return cls(stages, chain)

    @classmethod
    def for_typed_values(cls, chain: Any) -> "BatchTransformationChain | None":
        """The batch form of ``chain`` for values with a Connect schema (:mod:`smt.batch.typed_rules`); None if
        some stage has none (no stage runs per record inside it: see :meth:`why_not_typed`)."""
        stages = [_batch_stage(stage, typed_batch_form) for stage in chain.stages]
        if not all(stages):
            return None
        return cls([s for s in stages if s is not None], chain)

    @staticmethod
    def why_not_typed(chain: Any) -> str | None:
        """Why ``chain`` has no batch form for values with a schema (the first stage); None if it has one."""
        for stage in chain.stages:
            if typed_batch_form(stage.transformation) is None:
                return f"transformation '{stage.alias}' ({stage.type_name}) has no batch form for values " \
                       f"with a schema"
            if _batch_stage(stage, typed_batch_form) is None:
                return f"the predicate of transformation '{stage.alias}' has no batch form"
        return None

    @staticmethod
    def why_not(chain: Any, records_of: RecordsOf | None = None) -> str | None:
        """Why ``chain`` has no batch form (the first stage that prevents one); None if it has one."""
        batch_stages = 0
        for stage in chain.stages:
            if _batch_stage(stage) is not None:
                batch_stages += 1
                continue
            if records_of is not None and not changes_keys_or_headers(stage):
                continue
            if batch_form(stage.transformation) is None:
                return f"transformation '{stage.alias}' ({stage.type_name}) has no batch form for its config"
            return f"the predicate of transformation '{stage.alias}' has no batch form"
        if chain.stages and batch_stages == 0:
            return "no transformation has a batch form"
        return None

    @property
    def unsuitable(self) -> str | None:
        """Why every batch would decline (a per-record stage that changes keys, say), once a batch showed it."""
        return next((s.unsuitable for s in self.stages if isinstance(s, RecordStage) and s.unsuitable), None)

    @property
    def per_record_stages(self) -> list[str]:
        """The aliases of the stages that run record by record."""
        return [s.alias or "" for s in self.stages if isinstance(s, RecordStage)]

    def apply(self, view: RecordBatchView) -> RecordBatchView:
        """Run every stage; raises :class:`Declined` when the per-record path must run.

        A reason is prefixed with the stage's SMT ("Cast$Value: ..."). An exception
        that is not a :class:`Declined` is a bug of a batch form (see
        :func:`~connector.api.declined.unexpected`).
        """
        for stage in self.stages:
            if view.num_rows == 0:
                break
            view = _applied(stage, view)
        return view

    def __len__(self) -> int:
        return len(self.stages)


def _batch_stage(stage: Any, form: Callable[[Any], BatchTransform | None] = batch_form) -> BatchStage | None:
    """The batch form (by ``form``) of one chain stage, or None if its transformation or predicate has none."""
    transform = form(stage.transformation)
    if transform is None:
        return None
    test = None
    if stage.predicate is not None:
        test = batch_predicate(stage.predicate)
        if test is None:
            return None
    return BatchStage(transform, test, bool(stage.negate), stage.alias, stage.type_name)


def _applied(stage: BatchStage | RecordStage, view: RecordBatchView) -> RecordBatchView:
    name = stage.name
    try:
        return stage.apply(view)
    except Declined as declined:
        raise Declined(f"{name}: {declined.reason}") from declined
    except Exception as exc:
        raise unexpected(exc, f"of transformation '{stage.alias}' ({name})") from exc
