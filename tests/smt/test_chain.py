"""TransformationChain: ports of Kafka's ConnectorConfigTest (transforms/predicates) and
TransformationStageTest, plus the chain's runtime behaviour and plugin resolution."""

from __future__ import annotations

import abc

import pytest

import smt
from connector.api import (
    ConfigException,
    ConnectException,
    DataException,
    RetriableException,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
)
from connector.api.config_def import ConfigDef, ConfigType, at_least
from smt.base import Predicate, Transformation
from smt.chain import TransformationChain, TransformationStage, validate
from tests.smt import record

HERE = "tests.smt.test_chain"
DUMMY_RECORD = SinkRecord(None, 0, None, None, None, None, 0)


class SimpleTransformation(Transformation):
    CONFIG_DEF = ConfigDef().define("magic.number", ConfigType.INT, validator=at_least(42), importance="high")

    magic_number = 0

    def configure(self, config):
        self.magic_number = int(config["magic.number"])

    def apply(self, rec):
        return rec.new_record(None, self.magic_number, None, None, None, None, 0)

    def close(self):
        self.magic_number = 0


class TestPredicate(Predicate):
    __test__ = False  # not a pytest class

    CONFIG_DEF = ConfigDef().define("int", ConfigType.INT, 80, at_least(80), "medium", "A test parameter")

    param = 0

    def configure(self, config):
        self.param = int(config["int"])

    def test(self, rec):
        return rec.kafka_partition == self.param

    def close(self):
        self.param = 0


class AbstractTestPredicate(Predicate):
    __test__ = False


class AbstractTransformation(Transformation):
    pass


class AbstractKeyValueTransformation(Transformation):
    def apply(self, rec):
        return None

    @abc.abstractmethod
    def side(self):
        ...


class AbstractKeyValueTransformationKey(AbstractKeyValueTransformation):
    def side(self):
        return "key"


class AbstractKeyValueTransformationValue(AbstractKeyValueTransformation):
    def side(self):
        return "value"


class NotAPlugin:
    pass


class HasDuplicateConfigTransformation(Transformation):
    MUST_EXIST_KEY = "must.exist.key"
    CONFIG_DEF = (ConfigDef()
                  # duplicates of the implicit keys: masked by them instead of clashing
                  .define("predicate", ConfigType.INT, importance="medium", doc="fake")
                  .define("negate", ConfigType.INT, 123, importance="medium", doc="fake")
                  .define(MUST_EXIST_KEY, ConfigType.BOOLEAN, True, importance="medium", doc="this key must exist"))

    seen = None

    def configure(self, config):
        HasDuplicateConfigTransformation.seen = dict(config)

    def apply(self, rec):
        return rec


def props(**extra):
    base = {"name": "test", "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector"}
    base.update({k.replace("__", "."): v for k, v in extra.items()})
    return base


def simple(**extra):
    return props(**{"transforms": "a", "transforms.a.type": f"{HERE}:SimpleTransformation",
                    "transforms.a.magic.number": "42", **extra})


# --- ConnectorConfigTest -----------------------------------------------------------------------


def test_no_transforms():
    validate(props())
    assert len(TransformationChain.from_config(props())) == 0


def test_dangling_transform_alias():
    with pytest.raises(ConfigException) as raised:
        validate(props(transforms="dangler"))
    assert "Not a Transformation" in str(raised.value)
    assert str(raised.value) == "Invalid value null for configuration transforms.dangler.type: Not a Transformation"


def test_wrong_transformation_type():
    with pytest.raises(ConfigException) as raised:
        validate({"transforms": "a", "transforms.a.type": "uninstantiable"})
    assert "Class uninstantiable could not be found" in str(raised.value)


def test_unconfigured_transform():
    with pytest.raises(ConfigException) as raised:
        validate({"transforms": "a", "transforms.a.type": f"{HERE}:SimpleTransformation"})
    assert 'Missing required configuration "transforms.a.magic.number" which' in str(raised.value)


def test_misconfigured_transform():
    with pytest.raises(ConfigException) as raised:
        validate(simple(**{"transforms.a.magic.number": "40"}))
    assert "Value must be at least 42" in str(raised.value)
    assert str(raised.value) == ("Invalid value 40 for configuration transforms.a.magic.number: "
                                 "Value must be at least 42")


def test_single_transform():
    chain = TransformationChain.from_config(simple())
    assert len(chain) == 1
    stage = chain.stages[0]
    assert stage.transform_class is SimpleTransformation
    assert stage.apply(DUMMY_RECORD).kafka_partition == 42


def test_multiple_transforms_one_dangling():
    with pytest.raises(ConfigException):
        validate(simple(transforms="a, b"))


def test_multiple_transforms():
    config = simple(transforms="a, b", **{"transforms.b.type": f"{HERE}:SimpleTransformation",
                                          "transforms.b.magic.number": "84"})
    chain = TransformationChain.from_config(config)
    assert len(chain) == 2
    assert chain.stages[0].apply(DUMMY_RECORD).kafka_partition == 42
    assert chain.stages[1].apply(DUMMY_RECORD).kafka_partition == 84


def test_abstract_transform():
    with pytest.raises(ConfigException) as raised:
        validate({"transforms": "a", "transforms.a.type": f"{HERE}:AbstractTransformation"})
    assert "This class is abstract and cannot be created." in str(raised.value)


def test_abstract_key_value_transform():
    with pytest.raises(ConfigException) as raised:
        validate({"transforms": "a", "transforms.a.type": f"{HERE}:AbstractKeyValueTransformation"})
    message = str(raised.value)
    assert "This class is abstract and cannot be created." in message
    assert f"{HERE}:AbstractKeyValueTransformationKey" in message
    assert f"{HERE}:AbstractKeyValueTransformationValue" in message


def test_wrong_predicate_type():
    config = simple(**{"transforms.a.predicate": "my-pred", "predicates": "my-pred",
                       "predicates.my-pred.type": f"{HERE}:NotAPlugin"})
    with pytest.raises(ConfigException) as raised:
        validate(config)
    assert str(raised.value) == f"Class {HERE}:NotAPlugin does not implement the Predicate interface"


def assert_transformation_stage_with_predicate(config, expected_negated):
    chain = TransformationChain.from_config(config)
    assert len(chain) == 1
    stage = chain.stages[0]
    assert stage.apply(DUMMY_RECORD).kafka_partition == (42 if expected_negated else 0)
    matching = DUMMY_RECORD.new_record(None, 84, None, None, None, None, 0)
    assert stage.apply(matching).kafka_partition == (84 if expected_negated else 42)
    assert stage.transform_class is SimpleTransformation
    stage.close()


def test_single_conditional_transform():
    config = simple(**{"transforms.a.predicate": "my-pred", "transforms.a.negate": "true", "predicates": "my-pred",
                       "predicates.my-pred.type": f"{HERE}:TestPredicate", "predicates.my-pred.int": "84"})
    assert_transformation_stage_with_predicate(config, True)


def test_predicate_negation_defaults_to_false():
    config = simple(**{"transforms.a.predicate": "my-pred", "predicates": "my-pred",
                       "predicates.my-pred.type": f"{HERE}:TestPredicate", "predicates.my-pred.int": "84"})
    assert_transformation_stage_with_predicate(config, False)


def test_abstract_predicate():
    config = simple(**{"transforms.a.predicate": "my-pred", "predicates": "my-pred",
                       "predicates.my-pred.type": f"{HERE}:AbstractTestPredicate", "predicates.my-pred.int": "84"})
    with pytest.raises(ConfigException) as raised:
        validate(config)
    assert "This class is abstract and cannot be created" in str(raised.value)


def test_misconfigured_predicate():
    config = simple(**{"transforms.a.predicate": "my-pred", "transforms.a.negate": "true", "predicates": "my-pred",
                       "predicates.my-pred.type": f"{HERE}:TestPredicate", "predicates.my-pred.int": "79"})
    with pytest.raises(ConfigException) as raised:
        validate(config)
    assert "Value must be at least 80" in str(raised.value)


def test_missing_predicate_alias_property():
    # Like Kafka's ConnectorConfig, validation does not check that the predicate alias is listed in
    # "predicates"; building the stages does (Kafka: "Unknown configuration 'predicates.my-pred.type'").
    config = simple(**{"transforms.a.predicate": "my-pred", "predicates.my-pred.type": f"{HERE}:TestPredicate",
                       "predicates.my-pred.int": "84"})
    validate(config)
    with pytest.raises(ConfigException) as raised:
        TransformationChain.from_config(config)
    assert str(raised.value) == ("Invalid value my-pred for configuration transforms.a.predicate: Unknown "
                                 "configuration 'predicates.my-pred.type': predicate 'my-pred' is not listed in "
                                 "'predicates'")


def test_missing_predicate_config():
    config = simple(**{"transforms.a.predicate": "my-pred", "predicates": "my-pred"})
    with pytest.raises(ConfigException) as raised:
        validate(config)
    assert "Not a Predicate" in str(raised.value)


def test_negated_but_no_predicate():
    with pytest.raises(ConfigException) as raised:
        validate(simple(**{"transforms.a.negate": "true"}))
    assert "there is no config 'transforms.a.predicate' defining a predicate to be negated" in str(raised.value)
    assert str(raised.value) == ("Config 'transforms.a.negate' was provided but there is no config "
                                 "'transforms.a.predicate' defining a predicate to be negated.")


def test_enriched_config_def_masks_predicate_and_negate():
    config = {"transforms": "hdt", "transforms.hdt.type": f"{HERE}:HasDuplicateConfigTransformation"}
    validate(config)  # the transformation's own INT "predicate" (required) is masked by the implicit STRING one
    TransformationChain.from_config(dict(config, **{"transforms.hdt.negate": "false",
                                                    "transforms.hdt.predicate": "p", "predicates": "p",
                                                    "predicates.p.type": "RecordIsTombstone"}))
    assert HasDuplicateConfigTransformation.seen == {}  # type, predicate and negate are not passed on
    with pytest.raises(ConfigException, match="Expected value to be either true or false"):
        validate(dict(config, **{"transforms.hdt.negate": "123", "transforms.hdt.predicate": "p"}))


def test_duplicate_aliases():
    with pytest.raises(ConfigException, match=r"^Invalid value \[a, a\] for configuration transforms: "
                                              r"Duplicate alias provided.$"):
        validate({"transforms": "a,a"})
    with pytest.raises(ConfigException, match=r"^Invalid value \[p, p\] for configuration predicates: "
                                              r"Duplicate alias provided.$"):
        validate({"predicates": "p, p"})


# --- TransformationStageTest ---------------------------------------------------------------------


class _MockPredicate:
    def __init__(self, result):
        self.result = result
        self.closed = False

    def test(self, rec):
        return self.result

    def close(self):
        self.closed = True


class _MockTransformation:
    def __init__(self, output):
        self.output = output
        self.closed = False

    def apply(self, rec):
        return self.output

    def close(self):
        self.closed = True


INITIAL = record(topic="initial")
TRANSFORMED = record(topic="transformed")


@pytest.mark.parametrize("predicate_result, negate, expected", [
    (True, False, TRANSFORMED), (True, True, INITIAL), (False, False, INITIAL), (False, True, TRANSFORMED),
])
def test_stage_apply(predicate_result, negate, expected):
    predicate, transformation = _MockPredicate(predicate_result), _MockTransformation(TRANSFORMED)
    stage = TransformationStage(transformation, predicate, negate)
    assert stage.apply(INITIAL) is expected
    stage.close()
    assert predicate.closed and transformation.closed


# --- the chain at runtime ----------------------------------------------------------------------


class Boom(Transformation):
    def configure(self, config):
        self.kind = config.get("kind", "data")

    def apply(self, rec):
        if self.kind == "data":
            raise DataException("bad data")
        if self.kind == "retriable":
            raise RetriableException("try again")
        raise KeyError("oops")


def test_chain_applies_in_order_and_filter_stops_it():
    config = {
        "transforms": "route,insert,drop",
        "transforms.route.type": "RegexRouter", "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "$1-x",
        "transforms.insert.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.insert.topic.field": "t",
        "transforms.drop.type": "Filter", "transforms.drop.predicate": "isTomb",
        "predicates": "isTomb", "predicates.isTomb.type": "RecordIsTombstone",
    }
    chain = TransformationChain.from_config(config)
    out = chain.apply(record(value={"a": 1}, topic="orders"))
    assert out.topic == "orders-x"
    assert out.value == {"a": 1, "t": "orders-x"}  # InsertField sees the routed topic
    assert chain.apply(record(value=None, topic="orders")) is None
    chain.close()


def test_negated_predicate_on_filter_keeps_only_matching_topics():
    config = {"transforms": "keep", "transforms.keep.type": "org.apache.kafka.connect.transforms.Filter",
              "transforms.keep.predicate": "wanted", "transforms.keep.negate": True,
              "predicates": "wanted", "predicates.wanted.type":
                  "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
              "predicates.wanted.pattern": "keep-.*"}
    chain = TransformationChain.from_config(config)
    assert chain.apply(record(topic="keep-1")).topic == "keep-1"
    assert chain.apply(record(topic="other")) is None


@pytest.mark.parametrize("kind, error, text", [
    ("data", DataException, "bad data"),
    ("retriable", RetriableException, "try again"),
    ("other", ConnectException, "KeyError: 'oops'"),
])
def test_runtime_errors_are_wrapped_with_context(kind, error, text):
    chain = TransformationChain.from_config({"transforms": "b", "transforms.b.type": f"{HERE}:Boom",
                                             "transforms.b.kind": kind})
    with pytest.raises(error) as raised:
        chain.apply(record(topic="t", partition=2, offset=17))
    message = str(raised.value)
    assert message.startswith(text)
    assert "topic: t, partition: 2, offset: 17" in message
    assert f"transformation 'b' ({HERE}:Boom)" in message
    assert raised.value.__cause__ is not None and type(raised.value.__cause__).__name__ in (
        "DataException", "RetriableException", "KeyError")


def test_kafka_error_text_kept_at_runtime():
    chain = TransformationChain.from_config({"transforms": "c", "transforms.c.type":
                                             "org.apache.kafka.connect.transforms.Cast$Value",
                                             "transforms.c.spec": "int32"})
    with pytest.raises(DataException, match=r"^Value \(x\) was out of range for requested data type \(in "
                                            r"transformation 'c' \(org\.apache\.kafka\.connect\.transforms\."
                                            r"Cast\$Value\), topic: t, partition: 0, offset: 3\)$"):
        chain.apply(record(value="x", topic="t", offset=3))


def test_config_errors_name_alias_key_and_value():
    base = {"transforms": "ins", "transforms.ins.type": "org.apache.kafka.connect.transforms.InsertField$Value"}
    with pytest.raises(ConfigException, match=r"^Invalid configuration for transformation 'ins' "
                                              r"\(org\.apache\.kafka\.connect\.transforms\.InsertField\$Value\): "
                                              r"No field insertion configured$"):
        TransformationChain.from_config(base)
    with pytest.raises(ConfigException, match=r"^Invalid value null for configuration transforms\.ins\.static\.value: "
                                              r"No value specified for static field: s \(transformation 'ins'"):
        TransformationChain.from_config(dict(base, **{"transforms.ins.static.field": "s"}))
    with pytest.raises(ConfigException, match=r"^Invalid value \[\] for configuration transforms\.c\.spec: "
                                              r"Must specify at least one field to cast\.$"):
        validate({"transforms": "c", "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Key",
                  "transforms.c.spec": ""})
    with pytest.raises(ConfigException, match=r"^Invalid value maybe for configuration "
                                              r"transforms\.c\.replace\.null\.with\.default: Expected value to be "
                                              r"either true or false$"):
        validate({"transforms": "c", "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Key",
                  "transforms.c.spec": "int8", "transforms.c.replace.null.with.default": "maybe"})


def test_json_scalars_in_config():
    chain = TransformationChain.from_config({
        "transforms": ["meta"], "transforms.meta.type": "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value",
        "transforms.meta.schema.version": 3, "transforms.meta.replace.null.with.default": False})
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    out = chain.apply(record(value_schema=schema, value=Struct(schema).put("a", 1)))
    assert out.value_schema.version == 3


# --- plugin names ----------------------------------------------------------------------------------


def test_registry_covers_every_kafka_smt_and_predicate():
    sided = ["Cast", "ExtractField", "Flatten", "HeaderFrom", "HoistField", "InsertField", "MaskField",
             "ReplaceField", "SetSchemaMetadata", "TimestampConverter"]
    plain = ["DropHeaders", "Filter", "InsertHeader", "RegexRouter", "TimestampRouter", "ValueToKey"]
    for name in sided:
        for side in ("Key", "Value"):
            cls = smt.transformation_class(f"org.apache.kafka.connect.transforms.{name}${side}")
            assert cls.__name__ == side
    for name in plain:
        assert smt.transformation_class(f"org.apache.kafka.connect.transforms.{name}").__name__ == name
        assert smt.transformation_class(name).__name__ == name  # simple-name alias
    for name in ("HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"):
        assert smt.predicate_class(f"org.apache.kafka.connect.transforms.predicates.{name}").__name__ == name
        assert smt.predicate_class(name).__name__ == name


def test_iceberg_names_are_registered():
    for name, target in [("CopyValue", "smt.iceberg.copy_value:CopyValue"),
                         ("DebeziumTransform", "smt.iceberg.debezium:DebeziumTransform"),
                         ("DmsTransform", "smt.iceberg.dms:DmsTransform"),
                         ("JsonToMapTransform", "smt.iceberg.json_to_map:JsonToMapTransform"),
                         ("KafkaMetadataTransform", "smt.iceberg.kafka_metadata:KafkaMetadataTransform"),
                         ("MongoDebeziumTransform", "smt.iceberg.mongo_debezium:MongoDebeziumTransform")]:
        assert smt.TRANSFORMS[f"org.apache.iceberg.connect.transforms.{name}"] == target
        assert smt.TRANSFORMS[f"io.tabular.iceberg.connect.transforms.{name}"] == target


@pytest.mark.parametrize("name", ["Key", "Value", "Cast$Value", "Cast", "org.apache.kafka.connect.transforms.Cast",
                                  "NoSuchTransform"])
def test_ambiguous_or_unknown_names(name):
    with pytest.raises(ConfigException):
        smt.load(name, {"spec": "int8"})


def test_load_and_user_plugins():
    xform = smt.load("org.apache.kafka.connect.transforms.HoistField$Key", {"field": "k"})
    assert xform.apply(record(key=1)).key == {"k": 1}
    assert smt.load(f"{HERE}:SimpleTransformation", {"magic.number": "50"}).apply(DUMMY_RECORD).kafka_partition == 50
    assert smt.load_predicate("HasHeaderKey", {"name": "h"}).test(record()) is False
    with pytest.raises(ConfigException, match="does not implement the Transformation interface"):
        smt.load(f"{HERE}:NotAPlugin")


def test_configured_chain_survives_pickling():
    # A chain may be shipped to Spark executors; schema caches start empty there.
    import pickle

    config = {"transforms": "cast,route", "transforms.cast.type": "org.apache.kafka.connect.transforms.Cast$Value",
              "transforms.cast.spec": "x:int8", "transforms.route.type": "RegexRouter",
              "transforms.route.regex": "(.*)", "transforms.route.replacement": "p-$1"}
    chain = pickle.loads(pickle.dumps(TransformationChain.from_config(config)))
    out = chain.apply(record(value={"x": 300}))
    assert (out.topic, out.value) == ("p-topic", {"x": 44})
