"""The test Schema Registry speaks Confluent's REST API: ids, versions, deletes, config, compatibility."""

from __future__ import annotations

import base64
import json

import pytest
import requests

from tests.confluent import confluent_client, unique
from tests.support.schema_registry import SchemaRegistryServer

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def record(name: str, *fields: dict, **extra) -> str:
    return json.dumps({"type": "record", "name": name, "fields": list(fields), **extra})


def post(url: str, body: dict, **params):
    return requests.post(url, data=json.dumps(body), headers=CT, params=params or None, timeout=10)


def register(base: str, subject: str, schema: str, schema_type: str | None = None, refs=None):
    body: dict = {"schema": schema}
    if schema_type:
        body["schemaType"] = schema_type
    if refs:
        body["references"] = refs
    return post(f"{base}/subjects/{subject}/versions", body)


def set_level(base: str, subject: str, level: str) -> None:
    r = requests.put(f"{base}/config/{subject}", data=json.dumps({"compatibility": level}),
                     headers=CT, timeout=10)
    assert r.status_code == 200, r.text
    assert r.json() == {"compatibility": level}


def error(response) -> tuple[int, int]:
    return response.status_code, response.json()["error_code"]


A1 = record("A", {"name": "x", "type": "int"})


# --- ids, versions, lookups ----------------------------------------------------------------------

def test_ids_are_global_and_shared_across_subjects(schema_registry):
    base = schema_registry.url
    s1, s2 = unique("ids-a"), unique("ids-b")
    schema = record(unique("Shared").replace("-", "_"), {"name": "x", "type": "int"})
    r1 = register(base, s1, schema)
    r2 = register(base, s2, schema)
    assert r1.status_code == 200 and "id" in r1.json()
    assert r1.json()["id"] == r2.json()["id"]
    other = register(base, unique("ids-c"), record("Other" + s1.replace("-", "_"),
                                                   {"name": "y", "type": "int"}))
    assert other.json()["id"] != r1.json()["id"]
    # registering the same schema again gives the same id and no new version
    assert register(base, s2, schema).json()["id"] == r1.json()["id"]
    assert requests.get(f"{base}/subjects/{s2}/versions").json() == [1]
    versions = requests.get(f"{base}/schemas/ids/{r1.json()['id']}/versions").json()
    assert {"subject": s1, "version": 1} in versions and {"subject": s2, "version": 1} in versions
    assert set(requests.get(f"{base}/schemas/ids/{r1.json()['id']}/subjects").json()) >= {s1, s2}
    assert s1 in requests.get(f"{base}/subjects").json()


def test_versions_latest_and_schema_text(schema_registry):
    base = schema_registry.url
    subject = unique("versions")
    v1 = record("V", {"name": "a", "type": "int"})
    v2 = record("V", {"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": ""})
    id1 = register(base, subject, v1).json()["id"]
    id2 = register(base, subject, v2).json()["id"]
    assert requests.get(f"{base}/subjects/{subject}/versions").json() == [1, 2]
    latest = requests.get(f"{base}/subjects/{subject}/versions/latest").json()
    assert latest["version"] == 2 and latest["id"] == id2 and latest["subject"] == subject
    assert "schemaType" not in latest  # AVRO is implied
    assert json.loads(latest["schema"]) == json.loads(v2)
    first = requests.get(f"{base}/subjects/{subject}/versions/1").json()
    assert first["id"] == id1
    raw = requests.get(f"{base}/subjects/{subject}/versions/1/schema")
    assert json.loads(raw.text) == json.loads(v1)
    by_id = requests.get(f"{base}/schemas/ids/{id1}").json()
    assert json.loads(by_id["schema"]) == json.loads(v1)


def test_lookup_schema_under_subject(schema_registry):
    base = schema_registry.url
    subject = unique("lookup")
    schema_id = register(base, subject, A1).json()["id"]
    found = post(f"{base}/subjects/{subject}", {"schema": A1})
    assert found.status_code == 200
    assert found.json()["id"] == schema_id and found.json()["version"] == 1
    # whitespace does not matter
    assert post(f"{base}/subjects/{subject}", {"schema": json.dumps(json.loads(A1), indent=2)}
                ).json()["id"] == schema_id
    missing = post(f"{base}/subjects/{subject}", {"schema": record("A", {"name": "z", "type": "int"})})
    assert error(missing) == (404, 40403)
    assert error(post(f"{base}/subjects/{unique('nosuch')}", {"schema": A1})) == (404, 40401)


def test_error_codes(schema_registry):
    base = schema_registry.url
    subject = unique("errors")
    register(base, subject, A1)
    r = requests.get(f"{base}/schemas/ids/987654")
    assert error(r) == (404, 40403)
    assert r.json()["message"] == "Schema 987654 not found"
    assert error(requests.get(f"{base}/subjects/{unique('nope')}/versions")) == (404, 40401)
    assert error(requests.get(f"{base}/subjects/{subject}/versions/7")) == (404, 40402)
    assert error(requests.get(f"{base}/subjects/{subject}/versions/0")) == (422, 42202)
    assert error(requests.get(f"{base}/subjects/{subject}/versions/abc")) == (422, 42202)
    assert error(register(base, subject, "{not json")) == (422, 42201)
    assert error(register(base, subject, json.dumps({"type": "record", "name": "X"}))) == (422, 42201)
    assert error(register(base, subject, json.dumps({"type": "nosuchtype"}))) == (422, 42201)
    assert error(register(base, unique("j"), '"just a string"', "JSON")) == (422, 42201)
    assert error(register(base, unique("p"), 'syntax = "proto3"; message M {}', "PROTOBUF")) == \
        (422, 42201)
    bad_ref = register(base, unique("r"), json.dumps({"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "com.Missing"}]}),
        refs=[{"name": "com.Missing", "subject": unique("missing"), "version": 1}])
    assert error(bad_ref) == (422, 42201)
    r = requests.put(f"{base}/config/{subject}", data=json.dumps({"compatibility": "SIDEWAYS"}),
                     headers=CT)
    assert error(r) == (422, 42203)
    assert error(requests.get(f"{base}/no/such/route")) == (404, 404)


def test_soft_and_hard_delete(schema_registry):
    base = schema_registry.url
    subject = unique("delete")
    register(base, subject, A1)
    register(base, subject, record("A", {"name": "x", "type": "int"},
                                   {"name": "y", "type": "int", "default": 0}))
    r = requests.delete(f"{base}/subjects/{subject}/versions/2?permanent=true")
    assert error(r) == (404, 40407)
    assert requests.delete(f"{base}/subjects/{subject}/versions/2").json() == 2
    assert error(requests.delete(f"{base}/subjects/{subject}/versions/2")) == (404, 40406)
    assert requests.get(f"{base}/subjects/{subject}/versions").json() == [1]
    assert requests.get(f"{base}/subjects/{subject}/versions?deleted=true").json() == [1, 2]
    assert error(requests.delete(f"{base}/subjects/{subject}?permanent=true")) == (404, 40405)
    assert requests.delete(f"{base}/subjects/{subject}").json() == [1]
    assert error(requests.delete(f"{base}/subjects/{subject}")) == (404, 40404)
    assert error(requests.get(f"{base}/subjects/{subject}/versions")) == (404, 40401)
    assert subject not in requests.get(f"{base}/subjects").json()
    assert subject in requests.get(f"{base}/subjects?deleted=true").json()
    # a soft-deleted schema is still found by a lookup with deleted=true, and by id
    found = post(f"{base}/subjects/{subject}", {"schema": A1}, deleted="true")
    assert found.status_code == 200 and found.json()["version"] == 1
    # re-registering continues the version numbers
    assert register(base, subject, A1).status_code == 200
    assert requests.get(f"{base}/subjects/{subject}/versions").json() == [3]
    requests.delete(f"{base}/subjects/{subject}")
    assert requests.delete(f"{base}/subjects/{subject}?permanent=true").status_code == 200
    assert error(requests.get(f"{base}/subjects/{subject}/versions?deleted=true")) == (404, 40401)


def test_config_global_and_subject():
    with SchemaRegistryServer() as registry:  # a private registry: this changes the global level
        base = registry.url
        assert requests.get(f"{base}/config").json() == {"compatibilityLevel": "BACKWARD"}
        r = requests.put(f"{base}/config", data=json.dumps({"compatibility": "full"}), headers=CT)
        assert r.json() == {"compatibility": "FULL"}
        assert requests.get(f"{base}/config").json() == {"compatibilityLevel": "FULL"}
        assert error(requests.get(f"{base}/config/s")) == (404, 40408)
        assert requests.get(f"{base}/config/s?defaultToGlobal=true").json() == \
            {"compatibilityLevel": "FULL"}
        set_level(base, "s", "NONE")
        assert requests.get(f"{base}/config/s").json() == {"compatibilityLevel": "NONE"}
        assert requests.delete(f"{base}/config/s").json() == {"compatibilityLevel": "NONE"}
        # the global level applies to subjects without their own
        register(base, "g", A1)
        assert error(register(base, "g", record("A", {"name": "x", "type": "string"}))) == (409, 409)


def test_schema_types_and_formats(schema_registry):
    base = schema_registry.url
    assert set(requests.get(f"{base}/schemas/types").json()) == {"AVRO", "JSON", "PROTOBUF"}
    subject = unique("json")
    schema_id = register(base, subject, json.dumps({"type": "object"}), "JSON").json()["id"]
    body = requests.get(f"{base}/schemas/ids/{schema_id}").json()
    assert body["schemaType"] == "JSON"
    assert requests.get(f"{base}/subjects/{subject}/versions/latest").json()["schemaType"] == "JSON"


def test_basic_auth():
    with SchemaRegistryServer(users={"alice": "s3cret"}) as registry:
        r = requests.get(f"{registry.url}/subjects")
        assert r.status_code == 401 and r.json()["error_code"] == 401
        assert requests.get(f"{registry.url}/subjects", auth=("alice", "wrong")).status_code == 401
        assert requests.get(f"{registry.url}/subjects", auth=("alice", "s3cret")).json() == []


def test_injected_failures_then_recovery():
    with SchemaRegistryServer() as registry:
        registry.inject_failures(2, 503)
        assert requests.get(f"{registry.url}/subjects").status_code == 503
        assert requests.get(f"{registry.url}/subjects").status_code == 503
        assert requests.get(f"{registry.url}/subjects").status_code == 200


def test_confluent_kafka_client_against_the_registry(schema_registry):
    from confluent_kafka.schema_registry import Schema

    client = confluent_client(schema_registry.url)
    subject = unique("ck")
    schema_id = client.register_schema(subject, Schema(A1, "AVRO"))
    assert client.get_schema(schema_id).schema_str and json.loads(client.get_schema(schema_id).schema_str) \
        == json.loads(A1)
    latest = client.get_latest_version(subject)
    assert latest.schema_id == schema_id and latest.version == 1
    assert client.lookup_schema(subject, Schema(A1, "AVRO")).version == 1
    client.set_compatibility(subject, "FORWARD")
    assert client.get_compatibility(subject) == "FORWARD"
    compatible = Schema(record("A", {"name": "x", "type": "int"}, {"name": "n", "type": "int"}), "AVRO")
    assert client.test_compatibility(subject, compatible) is True
    incompatible = Schema(record("A", {"name": "x", "type": "string"}), "AVRO")
    assert client.test_compatibility(subject, incompatible) is False
    assert client.get_subjects() and subject in client.get_subjects()
    assert client.delete_subject(subject) == [1]


# --- compatibility -----------------------------------------------------------------------------

def check(base: str, subject: str, schema: str, schema_type: str | None = None) -> bool:
    body = {"schema": schema}
    if schema_type:
        body["schemaType"] = schema_type
    r = post(f"{base}/compatibility/subjects/{subject}/versions/latest", body, verbose="true")
    assert r.status_code == 200, r.text
    return r.json()["is_compatible"]


def fresh(base: str, level: str, first: str, schema_type: str | None = None) -> str:
    subject = unique("compat")
    set_level(base, subject, level)
    r = register(base, subject, first, schema_type)
    assert r.status_code == 200, r.text
    return subject


def F(name: str, type_, **kw) -> dict:
    return {"name": name, "type": type_, **kw}


AVRO_CASES = [
    # (level, old fields, new fields, compatible)
    ("BACKWARD", [F("a", "int")], [F("a", "int"), F("b", "string")], False),
    ("BACKWARD", [F("a", "int")], [F("a", "int"), F("b", "string", default="x")], True),
    ("BACKWARD", [F("a", "int"), F("b", "string")], [F("a", "int")], True),
    ("FORWARD", [F("a", "int"), F("b", "string")], [F("a", "int")], False),
    ("FORWARD", [F("a", "int"), F("b", "string", default="")], [F("a", "int")], True),
    ("FORWARD", [F("a", "int")], [F("a", "int"), F("b", "string")], True),
    ("FULL", [F("a", "int")], [F("a", "int"), F("b", "string")], False),
    ("FULL", [F("a", "int")], [F("a", "int"), F("b", ["null", "string"], default=None)], True),
    ("BACKWARD", [F("a", "int")], [F("a", "long")], True),
    ("BACKWARD", [F("a", "int")], [F("a", "double")], True),
    ("BACKWARD", [F("a", "long")], [F("a", "int")], False),
    ("FORWARD", [F("a", "int")], [F("a", "long")], False),
    ("BACKWARD", [F("a", "string")], [F("a", "bytes")], True),
    ("BACKWARD", [F("a", "string")], [F("a", "int")], False),
    ("BACKWARD", [F("a", ["null", "int"])], [F("a", ["null", "int", "string"])], True),
    ("BACKWARD", [F("a", ["null", "int", "string"])], [F("a", ["null", "int"])], False),
    ("BACKWARD", [F("a", "int")], [F("a", ["null", "int"])], True),
    ("BACKWARD", [F("a", ["null", "int"])], [F("a", "int")], False),
    ("BACKWARD", [F("e", {"type": "enum", "name": "E", "symbols": ["X"]})],
     [F("e", {"type": "enum", "name": "E", "symbols": ["X", "Y"]})], True),
    ("FORWARD", [F("e", {"type": "enum", "name": "E", "symbols": ["X"]})],
     [F("e", {"type": "enum", "name": "E", "symbols": ["X", "Y"]})], False),
    ("FORWARD", [F("e", {"type": "enum", "name": "E", "symbols": ["X"], "default": "X"})],
     [F("e", {"type": "enum", "name": "E", "symbols": ["X", "Y"]})], True),
    ("BACKWARD", [F("f", {"type": "fixed", "name": "Fx", "size": 4})],
     [F("f", {"type": "fixed", "name": "Fx", "size": 8})], False),
    ("BACKWARD", [F("r", {"type": "record", "name": "In", "fields": [F("q", "int")]})],
     [F("r", {"type": "record", "name": "Renamed", "fields": [F("q", "int")]})], False),
    ("BACKWARD", [F("r", {"type": "record", "name": "In", "fields": [F("q", "int")]})],
     [F("r", {"type": "record", "name": "Renamed", "aliases": ["In"], "fields": [F("q", "int")]})],
     True),
    ("BACKWARD", [F("m", {"type": "map", "values": "int"})], [F("m", {"type": "map", "values": "long"})],
     True),
    ("BACKWARD", [F("l", {"type": "array", "items": "long"})],
     [F("l", {"type": "array", "items": "int"})], False),
    ("BACKWARD", [F("old", "int")], [F("new", "int", aliases=["old"])], True),
    ("NONE", [F("a", "int")], [F("a", "string")], True),
]


@pytest.mark.parametrize("level,old,new,compatible", AVRO_CASES)
def test_avro_compatibility(schema_registry, level, old, new, compatible):
    base = schema_registry.url
    subject = fresh(base, level, record("R", *old))
    new_schema = record("R", *new)
    assert check(base, subject, new_schema) is compatible
    r = register(base, subject, new_schema)
    if compatible:
        assert r.status_code == 200, r.text
    else:
        assert error(r) == (409, 409)
        assert "incompatible with an earlier schema" in r.json()["message"]


@pytest.mark.parametrize("level,compatible", [
    ("BACKWARD", True), ("BACKWARD_TRANSITIVE", False),
    ("FORWARD", True), ("FORWARD_TRANSITIVE", True),
    ("FULL", True), ("FULL_TRANSITIVE", False),
])
def test_transitive_levels_check_every_version(schema_registry, level, compatible):
    base = schema_registry.url
    subject = fresh(base, "NONE", record("T", F("a", "int")))
    assert register(base, subject, record("T", F("a", "int"), F("b", "string", default="x"))
                    ).status_code == 200
    set_level(base, subject, level)
    # compatible with version 2 (b exists there) but not with version 1 (b missing, no default)
    v3 = record("T", F("a", "int"), F("b", "string"))
    r = register(base, subject, v3)
    assert (r.status_code == 200) is compatible, r.text


def test_compatibility_endpoint_against_a_version_and_missing_subject(schema_registry):
    base = schema_registry.url
    subject = fresh(base, "BACKWARD", record("C", F("a", "int")))
    ok = record("C", F("a", "long"))
    r = post(f"{base}/compatibility/subjects/{subject}/versions/1", {"schema": ok})
    assert r.json() == {"is_compatible": True}
    r = post(f"{base}/compatibility/subjects/{subject}/versions/1",
             {"schema": record("C", F("a", "string"))}, verbose="true")
    assert r.json()["is_compatible"] is False and r.json()["messages"]
    assert error(post(f"{base}/compatibility/subjects/{subject}/versions/5", {"schema": ok})) == \
        (404, 40402)
    # no versions yet: anything is compatible with "latest"
    r = post(f"{base}/compatibility/subjects/{unique('empty')}/versions/latest", {"schema": ok})
    assert r.json() == {"is_compatible": True}


def js(properties: dict, required=None, additional=None, **extra) -> str:
    schema: dict = {"type": "object", "properties": properties, **extra}
    if required is not None:
        schema["required"] = required
    if additional is not None:
        schema["additionalProperties"] = additional
    return json.dumps(schema)


JSON_CASES = [
    # open content model: adding a typed property is incompatible (old data may hold anything there)
    ("BACKWARD", js({"a": {"type": "string"}}), js({"a": {"type": "string"}, "b": {"type": "string"}}),
     False),
    ("BACKWARD", js({"a": {"type": "string"}}), js({"a": {"type": "string"}, "b": {}}), True),
    # closed content model: adding an optional property is fine, a required one is not
    ("BACKWARD", js({"a": {"type": "string"}}, additional=False),
     js({"a": {"type": "string"}, "b": {"type": "string"}}, additional=False), True),
    ("BACKWARD", js({"a": {"type": "string"}}, additional=False),
     js({"a": {"type": "string"}, "b": {"type": "string"}}, required=["b"], additional=False), False),
    # removing properties
    ("BACKWARD", js({"a": {"type": "string"}, "b": {"type": "string"}}), js({"a": {"type": "string"}}),
     True),
    ("BACKWARD", js({"a": {"type": "string"}, "b": {"type": "string"}}, additional=False),
     js({"a": {"type": "string"}}, additional=False), False),
    # types
    ("BACKWARD", js({"a": {"type": "string"}}), js({"a": {"type": "integer"}}), False),
    ("BACKWARD", js({"a": {"type": "integer"}}), js({"a": {"type": "number"}}), True),
    ("BACKWARD", js({"a": {"type": "number"}}), js({"a": {"type": "integer"}}), False),
    ("FORWARD", js({"a": {"type": "integer"}}), js({"a": {"type": "number"}}), False),
    ("BACKWARD", js({"a": {"type": "string"}}), js({"a": {"type": ["string", "null"]}}), True),
    # required
    ("BACKWARD", js({"a": {"type": "string"}}), js({"a": {"type": "string"}}, required=["a"]), False),
    ("BACKWARD", js({"a": {"type": "string"}}, required=["a"]), js({"a": {"type": "string"}}), True),
    # enums and unions
    ("BACKWARD", js({"e": {"enum": ["x"]}}), js({"e": {"enum": ["x", "y"]}}), True),
    ("BACKWARD", js({"e": {"enum": ["x", "y"]}}), js({"e": {"enum": ["x"]}}), False),
    ("BACKWARD", js({"u": {"oneOf": [{"type": "string"}]}}),
     js({"u": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}), True),
    ("BACKWARD", js({"u": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}),
     js({"u": {"oneOf": [{"type": "string"}]}}), False),
    # bounds
    ("BACKWARD", js({"s": {"type": "string", "maxLength": 5}}), js({"s": {"type": "string", "maxLength": 9}}),
     True),
    ("BACKWARD", js({"s": {"type": "string", "maxLength": 9}}), js({"s": {"type": "string", "maxLength": 5}}),
     False),
    ("NONE", js({"a": {"type": "string"}}), js({"a": {"type": "integer"}}), True),
]


@pytest.mark.parametrize("level,old,new,compatible", JSON_CASES)
def test_json_schema_compatibility(schema_registry, level, old, new, compatible):
    base = schema_registry.url
    subject = fresh(base, level, old, "JSON")
    assert check(base, subject, new, "JSON") is compatible
    r = register(base, subject, new, "JSON")
    assert (r.status_code == 200) is compatible, r.text


def proto(fields: list[tuple], *, package: str = "p", extra_messages=(), syntax: str = "proto3",
          message: str = "M") -> str:
    from google.protobuf import descriptor_pb2

    Fd = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="m.proto", package=package, syntax=syntax)
    m = fdp.message_type.add(name=message)
    for name, number, type_, *rest in fields:
        f = m.field.add(name=name, number=number, type=type_,
                        label=rest[0] if rest else Fd.LABEL_OPTIONAL)
        if type_ == Fd.TYPE_MESSAGE:
            f.type_name = f".{package}.Inner"
    for extra in extra_messages:
        inner = fdp.message_type.add(name=extra)
        inner.field.add(name="v", number=1, type=Fd.TYPE_INT32, label=Fd.LABEL_OPTIONAL)
    return base64.b64encode(fdp.SerializeToString()).decode()


def _proto_cases():
    from google.protobuf import descriptor_pb2

    T = descriptor_pb2.FieldDescriptorProto
    return [
        (proto([("a", 1, T.TYPE_INT32)]), proto([("a", 1, T.TYPE_INT32), ("b", 2, T.TYPE_STRING)]), True),
        (proto([("a", 1, T.TYPE_INT32), ("b", 2, T.TYPE_STRING)]), proto([("a", 1, T.TYPE_INT32)]), True),
        (proto([("a", 1, T.TYPE_INT32)]), proto([("renamed", 1, T.TYPE_INT32)]), True),
        (proto([("a", 1, T.TYPE_INT32)]), proto([("a", 1, T.TYPE_INT64)]), True),
        (proto([("a", 1, T.TYPE_INT32)]), proto([("a", 1, T.TYPE_STRING)]), False),
        (proto([("a", 1, T.TYPE_INT32)]), proto([("a", 1, T.TYPE_SINT32)]), False),
        (proto([("a", 1, T.TYPE_STRING)]), proto([("a", 1, T.TYPE_BYTES)]), True),
        (proto([("a", 1, T.TYPE_INT32)]), proto([("a", 1, T.TYPE_INT32, T.LABEL_REPEATED)]), False),
        (proto([("a", 1, T.TYPE_STRING)]), proto([("a", 1, T.TYPE_STRING, T.LABEL_REPEATED)]), True),
        (proto([("a", 1, T.TYPE_MESSAGE)], extra_messages=["Inner"]),
         proto([("a", 1, T.TYPE_INT32)], extra_messages=["Inner"]), False),
        (proto([("a", 1, T.TYPE_INT32)], extra_messages=["Inner"]), proto([("a", 1, T.TYPE_INT32)]),
         False),
        (proto([("a", 1, T.TYPE_INT32)]), proto([("a", 1, T.TYPE_INT32)], package="q"), False),
        (proto([("a", 1, T.TYPE_INT32)], syntax="proto2"),
         proto([("a", 1, T.TYPE_INT32), ("b", 2, T.TYPE_INT32, T.LABEL_REQUIRED)], syntax="proto2"),
         False),
    ]


@pytest.mark.parametrize("case", range(13))
def test_protobuf_compatibility(schema_registry, case):
    old, new, compatible = _proto_cases()[case]
    base = schema_registry.url
    subject = fresh(base, "BACKWARD", old, "PROTOBUF")
    assert check(base, subject, new, "PROTOBUF") is compatible
    r = register(base, subject, new, "PROTOBUF")
    assert (r.status_code == 200) is compatible, r.text


def test_protobuf_formats(schema_registry):
    from google.protobuf import descriptor_pb2

    base = schema_registry.url
    T = descriptor_pb2.FieldDescriptorProto
    schema = proto([("a", 1, T.TYPE_INT32), ("tags", 2, T.TYPE_STRING, T.LABEL_REPEATED)])
    schema_id = register(base, unique("pb"), schema, "PROTOBUF").json()["id"]
    text = requests.get(f"{base}/schemas/ids/{schema_id}").json()
    assert text["schemaType"] == "PROTOBUF"
    assert "message M {" in text["schema"] and "repeated string tags = 2;" in text["schema"]
    serialized = requests.get(f"{base}/schemas/ids/{schema_id}?format=serialized").json()["schema"]
    fdp = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    assert [f.name for f in fdp.message_type[0].field] == ["a", "tags"]


def test_avro_references(schema_registry):
    base = schema_registry.url
    dep_subject = unique("dep")
    address = json.dumps({"type": "record", "name": "Address", "namespace": "com.acme",
                          "fields": [F("city", "string")]})
    assert register(base, dep_subject, address).status_code == 200
    user = json.dumps({"type": "record", "name": "User", "namespace": "com.acme",
                       "fields": [F("home", "com.acme.Address")]})
    refs = [{"name": "com.acme.Address", "subject": dep_subject, "version": 1}]
    r = register(base, unique("user"), user, refs=refs)
    assert r.status_code == 200, r.text
    body = requests.get(f"{base}/schemas/ids/{r.json()['id']}").json()
    assert body["references"] == refs
    assert requests.get(f"{base}/subjects/{dep_subject}/versions/1/referencedby").json() == \
        [r.json()["id"]]
