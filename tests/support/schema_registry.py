"""A small Confluent-Schema-Registry-compatible server for the tests.

It speaks the registry's REST API closely enough for Confluent's own clients
(confluent-kafka's ``SchemaRegistryClient`` and serializers) and for icefloe's
converters: schema ids are global and shared across subjects for identical
schemas, versions are per subject, soft/hard deletes, per-subject and global
compatibility levels with real checks, and Confluent's error bodies
``{"error_code": ..., "message": ...}``.

Usage::

    with SchemaRegistryServer() as registry:          # standalone
        print(registry.url)

    def test_x(schema_registry):                      # pytest (session fixture)
        schema_registry.url

Compatibility checks (``BACKWARD`` (default), ``BACKWARD_TRANSITIVE``,
``FORWARD``, ``FORWARD_TRANSITIVE``, ``FULL``, ``FULL_TRANSITIVE``, ``NONE``;
transitive levels check every non-deleted version, the others the latest):

* AVRO: Avro schema resolution (reader = new schema for BACKWARD, old for
  FORWARD): reader fields missing from the writer need a default; writer fields
  absent from the reader are fine; record/enum/fixed names must match (or be an
  alias); fixed sizes must match; writer enum symbols must exist in the reader
  enum unless it has a default; promotions int->long->float->double and
  string<->bytes; every writer union branch must be readable by the reader
  (union or not); arrays/maps recurse. Logical types are ignored, as in Avro.
* JSON: Confluent's JSON Schema diff, main rules: type changes are
  incompatible unless the new type set extends the old (``integer`` ->
  ``number``, adding types); adding a property to an open content model is
  incompatible unless its schema is empty (``{}``/``true``), adding an optional
  property (or a required one with a default) to a closed model is fine;
  removing a property from an open model is fine, from a closed model is not;
  making a property required is incompatible unless it has a default, dropping
  ``required`` is fine; ``additionalProperties`` false->true is fine,
  true->false is not; enum values may be added, not removed; ``oneOf``/``anyOf``
  branches may be added, not removed; string/number/array bounds may be
  relaxed, not tightened; ``items`` and ``$ref``/``definitions`` recurse.
* PROTOBUF: Confluent's Protobuf diff, main rules: fields are matched by
  number; adding/removing optional fields and renaming fields is fine; adding or
  removing a proto2 ``required`` field, changing a field's kind (scalar /
  message / map), its scalar group (varint ints and bools and enums / zig-zag
  ints / fixed32 / fixed64 / float / double / string-bytes) or its message type,
  changing a numeric field between singular and repeated, removing a message,
  changing the package, removing a field from a oneof, and moving existing
  fields into a oneof are incompatible.

Protobuf schemas are accepted as base64 ``FileDescriptorProto`` (what
confluent-kafka's Python serializer sends). ``.proto`` text cannot be parsed
here and is rejected with 42201; ``GET`` returns a ``.proto`` rendering of the
descriptor by default and the base64 descriptor with ``format=serialized``.

Test hooks: ``users`` (basic auth), ``inject_failures(count, status)``
(answer the next requests with an error, to test retries and fail-over),
``requests`` (log of ``(method, path)``) and ``reset()``.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlsplit

LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
          "FULL_TRANSITIVE")
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


class RegistryError(Exception):
    def __init__(self, status: int, error_code: int, message: str):
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message


def _subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def _version_not_found(version: Any) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def _schema_not_found(schema_id: Any = None) -> RegistryError:
    return RegistryError(404, 40403, f"Schema {schema_id} not found" if schema_id is not None
                         else "Schema not found")


def _invalid_schema(detail: str) -> RegistryError:
    return RegistryError(422, 42201, f"Invalid schema {detail}")


@dataclass
class StoredSchema:
    id: int
    schema_type: str
    schema: str                 # canonical text (Avro/JSON) or base64 descriptor (Protobuf)
    references: list[dict]
    guid: str
    key: tuple
    metadata: Any = None
    rule_set: Any = None
    parsed: Any = None          # type-specific parsed form, for compatibility checks


@dataclass
class SubjectVersion:
    version: int
    schema_id: int
    deleted: bool = False


@dataclass
class _Fault:
    remaining: int
    status: int
    path_prefix: str | None


# ==================================================================================================
# schema handling per type
# ==================================================================================================

def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


class _Types:
    """Parsing, canonical forms and compatibility per schema type."""

    def __init__(self, state: "RegistryState"):
        self.state = state

    # -- references --

    def _referenced(self, refs: list[dict]) -> list[StoredSchema]:
        out = []
        for ref in refs:
            try:
                name, subject, version = ref["name"], ref["subject"], int(ref["version"])
            except (KeyError, TypeError, ValueError):
                raise _invalid_schema(f"reference {ref!r}: expected name, subject and version") from None
            sv = self.state.subject_version(subject, version, include_deleted=True)
            if sv is None:
                raise _invalid_schema(f"reference '{name}': subject '{subject}' version {version} "
                                      f"does not exist")
            out.append(self.state.schemas[sv.schema_id])
        return out

    # -- parsing --

    def prepare(self, schema_type: str, text: str, refs: list[dict], normalize: bool
                ) -> tuple[str, tuple, Any]:
        """Validate; returns (stored text, dedup key, parsed form)."""
        if not isinstance(text, str) or not text.strip():
            raise _invalid_schema("(empty)")
        deps = self._referenced(refs)
        ref_key = tuple((r["name"], r["subject"], int(r["version"])) for r in refs)
        if schema_type == "AVRO":
            try:
                obj = json.loads(text)
            except ValueError as exc:
                raise _invalid_schema(f"{text[:100]}: {exc}") from exc
            parsed = self.parse_avro(obj, deps)
            stored = json.dumps(obj, separators=(",", ":"), sort_keys=normalize)
            return stored, ("AVRO", stored, ref_key), parsed
        if schema_type == "JSON":
            try:
                obj = json.loads(text)
            except ValueError as exc:
                raise _invalid_schema(f"{text[:100]}: {exc}") from exc
            if not isinstance(obj, (dict, bool)):
                raise _invalid_schema("JSON Schema must be an object or a boolean")
            try:
                import jsonschema  # optional
            except ImportError:
                jsonschema = None
            if jsonschema is not None:
                try:
                    jsonschema.validators.validator_for(obj).check_schema(obj)
                except jsonschema.SchemaError as exc:
                    raise _invalid_schema(f"{text[:100]}: {exc.message}") from exc
            stored = json.dumps(obj, separators=(",", ":"), sort_keys=normalize)
            return stored, ("JSON", stored, ref_key), (obj, [json.loads(d.schema) for d in deps],
                                                        [r["name"] for r in refs])
        if schema_type == "PROTOBUF":
            fdp = self.parse_protobuf(text, refs, deps)
            canonical = fdp.__class__()
            canonical.CopyFrom(fdp)
            canonical.ClearField("name")
            return (base64.b64encode(fdp.SerializeToString()).decode("ascii"),
                    ("PROTOBUF", canonical.SerializeToString(deterministic=True), ref_key), fdp)
        raise RegistryError(422, 42201, f"Invalid schema type {schema_type}")

    def parse_avro(self, obj: Any, deps: list[StoredSchema]) -> Any:
        import fastavro

        _validate_avro(obj)
        named: dict = {}
        try:
            for dep in deps:
                fastavro.parse_schema(json.loads(dep.schema), named_schemas=named)
            parsed = fastavro.parse_schema(obj, named_schemas=named)
        except Exception as exc:  # noqa: BLE001 - whatever fastavro rejects is an invalid schema (422)
            raise _invalid_schema(f"{_compact(obj)[:200]}: {exc}") from exc
        return parsed, named

    def parse_protobuf(self, text: str, refs: list[dict], deps: list[StoredSchema]) -> Any:
        from google.protobuf import descriptor_pb2, descriptor_pool
        from google.protobuf.message import DecodeError

        try:
            raw = base64.b64decode(text.encode("ascii"), validate=True)
            fdp = descriptor_pb2.FileDescriptorProto.FromString(raw)
        except (ValueError, DecodeError):
            raise _invalid_schema(
                "(this test registry only accepts Protobuf schemas as a base64 FileDescriptorProto, "
                "as confluent-kafka's serializer sends them; .proto text is not parsed)") from None
        pool = descriptor_pool.DescriptorPool()
        _add_well_known(pool)
        added = set(_WELL_KNOWN_NAMES)

        def add_with_deps(name: str, dep: StoredSchema) -> None:
            if name in added:
                return
            for sub_ref, sub in zip(dep.references, self._referenced(dep.references)):
                add_with_deps(sub_ref["name"], sub)
            d = descriptor_pb2.FileDescriptorProto()
            d.CopyFrom(dep.parsed)
            d.name = name
            pool.Add(d)
            added.add(name)

        try:
            for ref, dep in zip(refs, deps):
                add_with_deps(ref["name"], dep)
            if fdp.name in added:
                well_known = next(w for w in _well_known_files() if w.name == fdp.name)
                if well_known.SerializeToString(deterministic=True) == \
                        fdp.SerializeToString(deterministic=True):
                    return fdp  # a well-known file registered as such (top-level wrappers)
            probe = descriptor_pb2.FileDescriptorProto()
            probe.CopyFrom(fdp)
            probe.name = probe.name or "__registry_probe__.proto"
            if probe.name in added:
                probe.name = "__registry_probe__/" + probe.name
            pool.Add(probe)
        except Exception as exc:  # noqa: BLE001 - whatever the descriptor pool rejects is an invalid schema (422)
            raise _invalid_schema(f"(protobuf descriptor does not build: {exc})") from exc
        return fdp

    # -- rendering --

    def render(self, stored: StoredSchema, fmt: str | None) -> str:
        if stored.schema_type != "PROTOBUF":
            return stored.schema
        if fmt == "serialized":
            return stored.schema
        return render_proto(stored.parsed)

    # -- compatibility: returns a list of messages (empty = compatible) --

    def backward(self, new: StoredSchema, old: StoredSchema) -> list[str]:
        """Can ``new`` read data written with ``old``?"""
        if new.schema_type != old.schema_type:
            return [f"Incompatible because of different schema type: {new.schema_type} vs "
                    f"{old.schema_type}"]
        if new.schema_type == "AVRO":
            return avro_compat(new.parsed, old.parsed)
        if new.schema_type == "JSON":
            return json_compat(old.parsed, new.parsed)
        return proto_compat(old.parsed, new.parsed, self.state)

    def check(self, level: str, new: StoredSchema, previous: list[StoredSchema]) -> list[str]:
        if level == "NONE" or not previous:
            return []
        targets = previous if level.endswith("_TRANSITIVE") else previous[-1:]
        messages: list[str] = []
        for old in targets:
            if level.startswith(("BACKWARD", "FULL")):
                messages += [f"{m} (new schema cannot read version with id {old.id})"
                             for m in self.backward(new, old)]
            if level.startswith(("FORWARD", "FULL")):
                messages += [f"{m} (version with id {old.id} cannot read the new schema)"
                             for m in self.backward(old, new)]
        return messages


def _validate_avro(obj: Any) -> None:
    """Structural checks fastavro's parser lets through (a record without fields, ...)."""
    if isinstance(obj, list):
        for branch in obj:
            _validate_avro(branch)
        return
    if not isinstance(obj, dict):
        return
    t = obj.get("type")
    required = {"record": ("name", "fields"), "error": ("name", "fields"), "enum": ("name", "symbols"),
                "fixed": ("name", "size"), "array": ("items",), "map": ("values",)}
    for key in required.get(t, ()) if isinstance(t, str) else ():
        if key not in obj:
            raise _invalid_schema(f"{_compact(obj)[:200]}: a {t} needs '{key}'")
    if t in ("record", "error"):
        if not isinstance(obj["fields"], list):
            raise _invalid_schema(f"{_compact(obj)[:200]}: fields must be a list")
        for f in obj["fields"]:
            if not isinstance(f, dict) or "name" not in f or "type" not in f:
                raise _invalid_schema(f"{_compact(obj)[:200]}: a field needs a name and a type")
            _validate_avro(f["type"])
    elif t == "array":
        _validate_avro(obj["items"])
    elif t == "map":
        _validate_avro(obj["values"])
    elif isinstance(t, (dict, list)):
        _validate_avro(t)


# ==================================================================================================
# Avro reader/writer compatibility (Avro schema resolution)
# ==================================================================================================

_AVRO_PROMOTIONS = {("int", "long"), ("int", "float"), ("int", "double"), ("long", "float"),
                    ("long", "double"), ("float", "double"), ("string", "bytes"),
                    ("bytes", "string")}


def avro_compat(reader: Any, writer: Any) -> list[str]:
    (rs, rnamed), (ws, wnamed) = reader, writer
    messages: list[str] = []
    seen: set = set()

    def resolve(s: Any, named: dict) -> Any:
        while isinstance(s, str) and s in named:
            s = named[s]
        if isinstance(s, dict) and s.get("type") not in ("record", "error", "enum", "fixed",
                                                           "array", "map"):
            t = s.get("type")
            return resolve(t, named) if isinstance(t, (str, list, dict)) else s
        return s

    def kind(s: Any) -> str:
        if isinstance(s, list):
            return "union"
        if isinstance(s, str):
            return s
        t = s.get("type")
        return "record" if t == "error" else t

    def name(s: Any) -> str | None:
        return s.get("name") if isinstance(s, dict) else None

    def short(n: str | None) -> str | None:
        return n.rsplit(".", 1)[-1] if n else n

    def names_match(r: Any, w: Any) -> bool:
        rn, wn = name(r), name(w)
        if short(rn) == short(wn):
            return True
        aliases = r.get("aliases") or []
        return wn in aliases or short(wn) in [short(a) for a in aliases]

    def check(r: Any, w: Any, path: str) -> bool:
        r, w = resolve(r, rnamed), resolve(w, wnamed)
        key = (id(r), id(w))
        if key in seen:
            return True
        seen.add(key)
        rk, wk = kind(r), kind(w)
        if wk == "union":
            ok = True
            for b in w:
                ok &= check(r, b, path)
            return ok
        if rk == "union":
            for b in r:
                before = len(messages)
                if check(b, w, path):
                    return True
                del messages[before:]
            messages.append(f"{{errorType:'MISSING_UNION_BRANCH', description:'The new schema is "
                            f"missing a type inside a union field at path '{path}'', "
                            f"writerType:{wk}}}")
            return False
        if rk != wk:
            if (wk, rk) in _AVRO_PROMOTIONS:
                return True
            messages.append(f"{{errorType:'TYPE_MISMATCH', description:'The type (path '{path}') "
                            f"of a field in the new schema does not match with the old schema', "
                            f"readerType:{rk}, writerType:{wk}}}")
            return False
        if rk in ("record", "enum", "fixed") and not names_match(r, w):
            messages.append(f"{{errorType:'NAME_MISMATCH', description:'The name of the schema has "
                            f"changed (path '{path}')', readerName:{name(r)}, writerName:{name(w)}}}")
            return False
        if rk == "record":
            ok = True
            wfields = {f["name"]: f for f in w.get("fields", [])}
            for rf in r.get("fields", []):
                wf = wfields.get(rf["name"])
                if wf is None:
                    for alias in rf.get("aliases") or []:
                        wf = wfields.get(alias)
                        if wf is not None:
                            break
                if wf is not None:
                    ok &= check(rf["type"], wf["type"], f"{path}/fields/{rf['name']}")
                elif "default" not in rf:
                    messages.append(
                        f"{{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field "
                        f"'{rf['name']}' at path '{path}/fields' in the new schema has no default "
                        f"value and is missing in the old schema', additionalInfo:'{rf['name']}'}}")
                    ok = False
            return ok
        if rk == "enum":
            missing = [s for s in w.get("symbols", []) if s not in r.get("symbols", [])]
            if missing and r.get("default") is None:
                messages.append(f"{{errorType:'MISSING_ENUM_SYMBOLS', description:'The new schema "
                                f"is missing enum symbols '{missing}' at path '{path}/symbols'', "
                                f"additionalInfo:'{missing}'}}")
                return False
            return True
        if rk == "fixed":
            if r.get("size") != w.get("size"):
                messages.append(f"{{errorType:'FIXED_SIZE_MISMATCH', description:'The size of FIXED "
                                f"type field at path '{path}/size' in the new schema does not match "
                                f"with the old schema', readerSize:{r.get('size')}, "
                                f"writerSize:{w.get('size')}}}")
                return False
            return True
        if rk == "array":
            return check(r["items"], w["items"], f"{path}/items")
        if rk == "map":
            return check(r["values"], w["values"], f"{path}/values")
        return True

    check(rs, ws, "")
    return messages


# ==================================================================================================
# JSON Schema compatibility (main rules of Confluent's JSON Schema diff)
# ==================================================================================================

def json_compat(original: Any, update: Any) -> list[str]:
    """Differences from ``original`` to ``update`` that make ``update`` unable to read ``original``."""
    orig_root, orig_deps, orig_names = original
    upd_root, upd_deps, upd_names = update
    messages: list[str] = []
    seen: set = set()

    def deref(s: Any, root: Any, deps: list, names: list) -> Any:
        depth = 0
        while isinstance(s, dict) and "$ref" in s and depth < 50:
            depth += 1
            ref = s["$ref"]
            doc_part, _, pointer = ref.partition("#")
            doc = root
            if doc_part:
                if doc_part in names:
                    doc = deps[names.index(doc_part)]
                else:
                    return {}
            target: Any = doc
            for token in [t for t in pointer.split("/") if t]:
                token = unquote(token).replace("~1", "/").replace("~0", "~")
                if isinstance(target, dict) and token in target:
                    target = target[token]
                elif isinstance(target, list) and token.isdigit():
                    target = target[int(token)]
                else:
                    return {}
            s = target
        return s

    def types(s: Any) -> set[str] | None:
        if s is True or s == {}:
            return None
        if s is False:
            return set()
        t = s.get("type")
        if isinstance(t, str):
            return {t}
        if isinstance(t, list):
            return set(t)
        inferred = set()
        if any(k in s for k in ("properties", "required", "additionalProperties",
                                "patternProperties", "minProperties", "maxProperties")):
            inferred.add("object")
        if any(k in s for k in ("items", "minItems", "maxItems", "uniqueItems")):
            inferred.add("array")
        if any(k in s for k in ("minLength", "maxLength", "pattern")):
            inferred.add("string")
        if any(k in s for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                                "multipleOf")):
            inferred.add("number")
        return inferred or None

    def covers(new: set[str], old: set[str]) -> bool:
        return all(t in new or (t == "integer" and "number" in new) for t in old)

    def is_empty(s: Any) -> bool:
        return s is True or s == {}

    def add(kind: str, path: str) -> None:
        messages.append(f"{{errorType:\"{kind}\", description:\"at path '#{path}'\"}}")

    def compare(o: Any, u: Any, path: str) -> None:
        o = deref(o, orig_root, orig_deps, orig_names)
        u = deref(u, upd_root, upd_deps, upd_names)
        key = (id(o), id(u))
        if key in seen:
            return
        seen.add(key)
        if is_empty(u):
            return  # anything goes
        if o is False:
            return
        if u is False:
            add("TYPE_NARROWED", path)
            return
        if is_empty(o):
            add("TYPE_NARROWED", path)
            return
        for comb in ("oneOf", "anyOf"):
            if comb in o or comb in u:
                ob = o.get(comb, [o]) if isinstance(o, dict) else [o]
                ub = u.get(comb, [u]) if isinstance(u, dict) else [u]
                for i, branch in enumerate(ob):
                    ok = False
                    for ubranch in ub:
                        before = len(messages)
                        saved = set(seen)
                        compare(branch, ubranch, f"{path}/{comb}/{i}")
                        if len(messages) == before:
                            ok = True
                            break
                        del messages[before:]
                        seen.clear()
                        seen.update(saved)
                    if not ok:
                        add("SUM_TYPE_NARROWED", path)
                        return
                return
        if "allOf" in u and "allOf" not in o:
            add("PRODUCT_TYPE_EXTENDED", path)
            return
        ot, ut = types(o), types(u)
        if ot is not None and ut is not None and ot != ut:
            if covers(ut, ot):
                pass  # TYPE_EXTENDED
            elif covers(ot, ut):
                add("TYPE_NARROWED", path)
                return
            else:
                add("TYPE_CHANGED", path)
                return
        elif ut is not None and ot is None:
            add("TYPE_NARROWED", path)
            return
        if "enum" in u:
            if "enum" not in o or not all(v in u["enum"] for v in o["enum"]):
                add("ENUM_ARRAY_NARROWED" if "enum" in o else "ENUM_ARRAY_ADDED", path)
        if "const" in u and o.get("const", object()) != u["const"]:
            add("CONST_CHANGED", path)
        for kw, tighter in (("maxLength", lambda a, b: b < a), ("minLength", lambda a, b: b > a),
                            ("maximum", lambda a, b: b < a), ("minimum", lambda a, b: b > a),
                            ("exclusiveMaximum", lambda a, b: b < a),
                            ("exclusiveMinimum", lambda a, b: b > a),
                            ("maxItems", lambda a, b: b < a), ("minItems", lambda a, b: b > a),
                            ("maxProperties", lambda a, b: b < a),
                            ("minProperties", lambda a, b: b > a)):
            if kw in u and isinstance(u[kw], (int, float)) and not isinstance(u[kw], bool):
                if kw not in o:
                    add(f"{_snake(kw)}_ADDED", path)
                elif isinstance(o[kw], (int, float)) and tighter(o[kw], u[kw]):
                    add(f"{_snake(kw)}_{'DECREASED' if kw.startswith('max') else 'INCREASED'}", path)
        if "pattern" in u and o.get("pattern") != u["pattern"]:
            add("PATTERN_ADDED" if "pattern" not in o else "PATTERN_CHANGED", path)
        if u.get("uniqueItems") is True and o.get("uniqueItems") is not True:
            add("UNIQUE_ITEMS_ADDED", path)
        if "items" in o or "items" in u:
            oi, ui = o.get("items", True), u.get("items", True)
            if isinstance(oi, dict) or isinstance(ui, dict) or oi is False or ui is False:
                compare(oi, ui, f"{path}/items")
        if (ot and "object" in ot) or (ut and "object" in ut) or "properties" in o or "properties" in u:
            compare_objects(o, u, path)

    def compare_objects(o: dict, u: dict, path: str) -> None:
        op, up = o.get("properties", {}) or {}, u.get("properties", {}) or {}
        oreq, ureq = set(o.get("required", []) or []), set(u.get("required", []) or [])
        oadd, uadd = o.get("additionalProperties", True), u.get("additionalProperties", True)
        o_open, u_open = oadd is not False, uadd is not False
        for name, schema in up.items():
            if name in op:
                compare(op[name], schema, f"{path}/properties/{name}")
                if name in ureq and name not in oreq and not (
                        isinstance(schema, dict) and "default" in schema):
                    add("REQUIRED_ATTRIBUTE_ADDED", f"{path}/required/{name}")
                continue
            if o_open:
                if isinstance(oadd, dict) and oadd:
                    before = len(messages)
                    compare(oadd, schema, f"{path}/properties/{name}")
                    if len(messages) != before:
                        del messages[before:]
                        add("PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                            f"{path}/properties/{name}")
                elif not is_empty(schema):
                    add("PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", f"{path}/properties/{name}")
            elif name in ureq and not (isinstance(schema, dict) and "default" in schema):
                add("REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL", f"{path}/properties/{name}")
        for name, schema in op.items():
            if name in up:
                continue
            if not u_open:
                if schema is not False:
                    add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", f"{path}/properties/{name}")
            elif isinstance(uadd, dict) and uadd:
                before = len(messages)
                compare(schema, uadd, f"{path}/properties/{name}")
                if len(messages) != before:
                    del messages[before:]
                    add("PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
                        f"{path}/properties/{name}")
        if o_open and not u_open:
            add("ADDITIONAL_PROPERTIES_REMOVED", path)
        elif isinstance(oadd, dict) and isinstance(uadd, dict):
            compare(oadd, uadd, f"{path}/additionalProperties")
        elif oadd is True and isinstance(uadd, dict) and uadd:
            add("ADDITIONAL_PROPERTIES_NARROWED", path)

    compare(orig_root, upd_root, "")
    return messages


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).upper()


# ==================================================================================================
# Protobuf compatibility (main rules of Confluent's Protobuf diff)
# ==================================================================================================

_SCALAR_GROUPS = {
    "int32": "GENERAL_NUMBER", "int64": "GENERAL_NUMBER", "uint32": "GENERAL_NUMBER",
    "uint64": "GENERAL_NUMBER", "bool": "GENERAL_NUMBER", "enum": "GENERAL_NUMBER",
    "sint32": "SIGNED_NUMBER", "sint64": "SIGNED_NUMBER",
    "fixed32": "FIXED32", "sfixed32": "FIXED32", "fixed64": "FIXED64", "sfixed64": "FIXED64",
    "float": "FLOAT", "double": "DOUBLE", "string": "STRING_OR_BYTES", "bytes": "STRING_OR_BYTES",
}


def _proto_messages(fdp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    prefix = f".{fdp.package}" if fdp.package else ""

    def walk(msgs: Any, scope: str) -> None:
        for m in msgs:
            full = f"{scope}.{m.name}"
            out[full] = m
            walk(m.nested_type, full)

    walk(fdp.message_type, prefix)
    return out


def _proto_enums(fdp: Any) -> set[str]:
    out = set()
    prefix = f".{fdp.package}" if fdp.package else ""

    def walk(msgs: Any, scope: str) -> None:
        for m in msgs:
            full = f"{scope}.{m.name}"
            out.update(f"{full}.{e.name}" for e in m.enum_type)
            walk(m.nested_type, full)

    out.update(f"{prefix}.{e.name}" for e in fdp.enum_type)
    walk(fdp.message_type, prefix)
    return out


def proto_compat(original: Any, update: Any, state: "RegistryState") -> list[str]:
    from google.protobuf import descriptor_pb2

    F = descriptor_pb2.FieldDescriptorProto
    messages: list[str] = []
    if original.package != update.package:
        messages.append(f"PACKAGE_CHANGED: {original.package} -> {update.package}")
        return messages
    omsgs, umsgs = _proto_messages(original), _proto_messages(update)
    oenums, uenums = _proto_enums(original), _proto_enums(update)
    type_names = {v: k for k, v in F.Type.items()}

    def scalar(f: Any, enums: set[str]) -> str | None:
        if f.type == F.TYPE_ENUM:
            return "enum"
        if f.type in (F.TYPE_MESSAGE, F.TYPE_GROUP):
            return None
        return type_names[f.type][len("TYPE_"):].lower()

    def kind(f: Any, msgs: dict) -> str:
        if f.type == F.TYPE_MESSAGE:
            m = msgs.get(f.type_name)
            if m is not None and m.options.map_entry:
                return "MAP"
            return "MESSAGE"
        return "SCALAR"

    def local(name: str, package: str) -> str:
        prefix = f".{package}." if package else "."
        return name[len(prefix):] if name.startswith(prefix) else name.lstrip(".")

    for full, om in omsgs.items():
        um = umsgs.get(full)
        if um is None:
            if om.options.map_entry:
                continue
            messages.append(f"MESSAGE_REMOVED: {full}")
            continue
        ofields = {f.number: f for f in om.field}
        ufields = {f.number: f for f in um.field}

        def real_oneof(m: Any, f: Any) -> str | None:
            if not f.HasField("oneof_index") or f.proto3_optional:
                return None
            return m.oneof_decl[f.oneof_index].name

        moved_to_new_oneof: dict[str, int] = {}
        for number, of in ofields.items():
            uf = ufields.get(number)
            if uf is None:
                if of.label == F.LABEL_REQUIRED:
                    messages.append(f"REQUIRED_FIELD_REMOVED: {full}.{of.name}")
                if real_oneof(om, of) is not None:
                    messages.append(f"ONEOF_FIELD_REMOVED: {full}.{of.name}")
                continue
            ook, uok = kind(of, omsgs), kind(uf, umsgs)
            if ook != uok:
                messages.append(f"FIELD_KIND_CHANGED: {full}.{of.name}")
            elif ook == "SCALAR":
                og, ug = _SCALAR_GROUPS.get(scalar(of, oenums) or ""), _SCALAR_GROUPS.get(
                    scalar(uf, uenums) or "")
                if og != ug:
                    messages.append(f"FIELD_SCALAR_KIND_CHANGED: {full}.{of.name}")
                elif (of.label == F.LABEL_REPEATED) != (uf.label == F.LABEL_REPEATED) and \
                        og != "STRING_OR_BYTES":
                    messages.append(f"FIELD_NUMERIC_LABEL_CHANGED: {full}.{of.name}")
            elif ook == "MESSAGE":
                if local(of.type_name, original.package) != local(uf.type_name, update.package):
                    messages.append(f"FIELD_NAMED_TYPE_CHANGED: {full}.{of.name}")
            else:  # MAP: compare key and value types
                oe, ue = omsgs[of.type_name], umsgs[uf.type_name]
                for i in range(2):
                    a, b = oe.field[i], ue.field[i]
                    if kind(a, omsgs) != kind(b, umsgs) or (
                            kind(a, omsgs) == "SCALAR"
                            and _SCALAR_GROUPS.get(scalar(a, oenums) or "")
                            != _SCALAR_GROUPS.get(scalar(b, uenums) or "")) or (
                            kind(a, omsgs) == "MESSAGE"
                            and local(a.type_name, original.package)
                            != local(b.type_name, update.package)):
                        messages.append(f"FIELD_KIND_CHANGED: {full}.{of.name} (map)")
                        break
            oo, uo = real_oneof(om, of), real_oneof(um, uf)
            if oo is None and uo is not None:
                existing = any(real_oneof(om, f) == uo for f in om.field)
                if existing:
                    messages.append(f"FIELD_MOVED_TO_EXISTING_ONEOF: {full}.{of.name}")
                else:
                    moved_to_new_oneof[uo] = moved_to_new_oneof.get(uo, 0) + 1
        for oneof, count in moved_to_new_oneof.items():
            if count > 1:
                messages.append(f"MULTIPLE_FIELDS_MOVED_TO_ONEOF: {full}.{oneof}")
        for number, uf in ufields.items():
            if number not in ofields and uf.label == F.LABEL_REQUIRED:
                messages.append(f"REQUIRED_FIELD_ADDED: {full}.{uf.name}")
    return messages


# ==================================================================================================
# Protobuf rendering (.proto text from a FileDescriptorProto)
# ==================================================================================================

def render_proto(fdp: Any) -> str:
    from google.protobuf import descriptor_pb2

    F = descriptor_pb2.FieldDescriptorProto
    type_names = {v: k[len("TYPE_"):].lower() for k, v in F.Type.items()}
    lines = [f'syntax = "{fdp.syntax or "proto2"}";']
    if fdp.package:
        lines.append(f"package {fdp.package};")
    for dep in fdp.dependency:
        lines.append(f'import "{dep}";')
    maps: dict[str, Any] = {}

    def collect(msgs: Any, scope: str) -> None:
        for m in msgs:
            full = f"{scope}.{m.name}"
            if m.options.map_entry:
                maps[full] = m
            collect(m.nested_type, full)

    collect(fdp.message_type, f".{fdp.package}" if fdp.package else "")

    def ftype(f: Any) -> str:
        if f.type in (F.TYPE_MESSAGE, F.TYPE_ENUM, F.TYPE_GROUP):
            return f.type_name
        return type_names[f.type]

    def field_line(f: Any, indent: str, in_oneof: bool) -> str:
        if f.type == F.TYPE_MESSAGE and f.type_name in maps:
            entry = maps[f.type_name]
            return f"{indent}map<{ftype(entry.field[0])}, {ftype(entry.field[1])}> {f.name} = {f.number};"
        label = ""
        if not in_oneof:
            if f.label == F.LABEL_REPEATED:
                label = "repeated "
            elif f.label == F.LABEL_REQUIRED:
                label = "required "
            elif f.proto3_optional or (fdp.syntax in ("", "proto2")):
                label = "optional "
        return f"{indent}{label}{ftype(f)} {f.name} = {f.number};"

    def enum(e: Any, indent: str) -> None:
        lines.append(f"{indent}enum {e.name} {{")
        for v in e.value:
            lines.append(f"{indent}  {v.name} = {v.number};")
        lines.append(f"{indent}}}")

    def message(m: Any, indent: str) -> None:
        lines.append(f"{indent}message {m.name} {{")
        inner = indent + "  "
        done_oneofs: set[int] = set()
        for f in m.field:
            if f.HasField("oneof_index") and not f.proto3_optional:
                idx = f.oneof_index
                if idx in done_oneofs:
                    continue
                done_oneofs.add(idx)
                lines.append(f"{inner}oneof {m.oneof_decl[idx].name} {{")
                for g in m.field:
                    if g.HasField("oneof_index") and g.oneof_index == idx and not g.proto3_optional:
                        lines.append(field_line(g, inner + "  ", True))
                lines.append(f"{inner}}}")
            else:
                lines.append(field_line(f, inner, False))
        for nested in m.nested_type:
            if not nested.options.map_entry:
                message(nested, inner)
        for e in m.enum_type:
            enum(e, inner)
        lines.append(f"{indent}}}")

    for m in fdp.message_type:
        message(m, "")
    for e in fdp.enum_type:
        enum(e, "")
    return "\n".join(lines) + "\n"


_WELL_KNOWN_NAMES: list[str] = []


def _add_well_known(pool: Any) -> None:
    """Add google/protobuf/*, google/type/* (if installed) and confluent/* files to a pool."""
    files = _well_known_files()
    if not _WELL_KNOWN_NAMES:
        _WELL_KNOWN_NAMES.extend(f.name for f in files)
    for f in files:
        pool.Add(f)


_WELL_KNOWN_CACHE: list = []


def _well_known_files() -> list:
    if _WELL_KNOWN_CACHE:
        return _WELL_KNOWN_CACHE
    from google.protobuf import (
        any_pb2,
        api_pb2,
        descriptor_pb2,
        duration_pb2,
        empty_pb2,
        field_mask_pb2,
        source_context_pb2,
        struct_pb2,
        timestamp_pb2,
        type_pb2,
        wrappers_pb2,
    )

    modules = [descriptor_pb2, any_pb2, source_context_pb2, type_pb2, api_pb2, duration_pb2,
               empty_pb2, field_mask_pb2, struct_pb2, timestamp_pb2, wrappers_pb2]
    try:
        from google.type import date_pb2, timeofday_pb2  # type: ignore

        modules += [date_pb2, timeofday_pb2]
    except ImportError:
        pass
    out = []
    names = set()
    for m in modules:
        fdp = descriptor_pb2.FileDescriptorProto.FromString(m.DESCRIPTOR.serialized_pb)
        out.append(fdp)
        names.add(fdp.name)
    try:
        from converters.confluent.protobuf_data import builtin_file_descriptors

        for fdp in builtin_file_descriptors():
            if fdp.name not in names:
                out.append(fdp)
                names.add(fdp.name)
    except ImportError:
        pass
    _WELL_KNOWN_CACHE.extend(out)
    return out


# ==================================================================================================
# state
# ==================================================================================================

class RegistryState:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.types = _Types(self)
        self.reset()

    def reset(self) -> None:
        self.schemas: dict[int, StoredSchema] = {}
        self.by_key: dict[tuple, int] = {}
        self.by_guid: dict[str, int] = {}
        self.subjects: dict[str, list[SubjectVersion]] = {}
        self.global_level = "BACKWARD"
        self.subject_levels: dict[str, str] = {}
        self.mode = "READWRITE"

    # -- lookups --

    def versions(self, subject: str, include_deleted: bool = False) -> list[SubjectVersion]:
        return [v for v in self.subjects.get(subject, []) if include_deleted or not v.deleted]

    def subject_version(self, subject: str, version: int, include_deleted: bool = False
                        ) -> SubjectVersion | None:
        for v in self.versions(subject, include_deleted):
            if v.version == version:
                return v
        return None

    def require_subject(self, subject: str, include_deleted: bool = False) -> list[SubjectVersion]:
        versions = self.versions(subject, include_deleted)
        if not versions:
            raise _subject_not_found(subject)
        return versions

    def resolve_version(self, subject: str, version: str, include_deleted: bool = False
                        ) -> SubjectVersion:
        versions = self.require_subject(subject, include_deleted)
        if version in ("latest", "-1"):
            return versions[-1]
        number = _parse_version(version)
        for v in versions:
            if v.version == number:
                return v
        raise _version_not_found(number)

    def level(self, subject: str | None) -> str:
        if subject is not None and subject in self.subject_levels:
            return self.subject_levels[subject]
        return self.global_level

    # -- mutations --

    def register(self, subject: str, body: dict, normalize: bool) -> dict:
        schema_type = (body.get("schemaType") or "AVRO").upper()
        text = body.get("schema")
        refs = body.get("references") or []
        stored_text, key, parsed = self.types.prepare(schema_type, text, refs, normalize)
        existing_versions = self.versions(subject)
        for v in existing_versions:
            if self.schemas[v.schema_id].key == key:
                s = self.schemas[v.schema_id]
                return {"id": s.id, "guid": s.guid, "version": v.version}
        candidate = StoredSchema(0, schema_type, stored_text, refs, "", key, body.get("metadata"),
                                 body.get("ruleSet"), parsed)
        previous = [self.schemas[v.schema_id] for v in existing_versions]
        messages = self.types.check(self.level(subject), candidate, previous)
        if messages:
            raise RegistryError(
                409, 409, f"Schema being registered is incompatible with an earlier schema for "
                          f"subject \"{subject}\", details: [{', '.join(messages)}]")
        schema_id = self.by_key.get(key)
        if schema_id is None:
            schema_id = max(self.schemas, default=0) + 1
            candidate.id = schema_id
            candidate.guid = str(uuid.uuid4())
            self.schemas[schema_id] = candidate
            self.by_key[key] = schema_id
            self.by_guid[candidate.guid] = schema_id
        all_versions = self.subjects.setdefault(subject, [])
        number = max((v.version for v in all_versions), default=0) + 1
        all_versions.append(SubjectVersion(number, schema_id))
        s = self.schemas[schema_id]
        return {"id": s.id, "guid": s.guid, "version": number}

    def lookup(self, subject: str, body: dict, normalize: bool, deleted: bool) -> dict:
        schema_type = (body.get("schemaType") or "AVRO").upper()
        versions = self.require_subject(subject, include_deleted=deleted)
        _, key, _ = self.types.prepare(schema_type, body.get("schema"), body.get("references") or [],
                                       normalize)
        for v in versions:
            s = self.schemas[v.schema_id]
            if s.key == key:
                return self.version_body(subject, v, None)
        raise _schema_not_found()

    def version_body(self, subject: str, v: SubjectVersion, fmt: str | None) -> dict:
        s = self.schemas[v.schema_id]
        body: dict[str, Any] = {"subject": subject, "version": v.version, "id": s.id,
                                "guid": s.guid}
        if s.schema_type != "AVRO":
            body["schemaType"] = s.schema_type
        if s.references:
            body["references"] = s.references
        if s.metadata:
            body["metadata"] = s.metadata
        if s.rule_set:
            body["ruleSet"] = s.rule_set
        body["schema"] = self.types.render(s, fmt)
        return body

    def schema_body(self, s: StoredSchema, fmt: str | None) -> dict:
        body: dict[str, Any] = {"schema": self.types.render(s, fmt), "guid": s.guid}
        if s.schema_type != "AVRO":
            body["schemaType"] = s.schema_type
        if s.references:
            body["references"] = s.references
        if s.metadata:
            body["metadata"] = s.metadata
        if s.rule_set:
            body["ruleSet"] = s.rule_set
        return body


def _parse_version(text: str) -> int:
    try:
        number = int(text)
    except (TypeError, ValueError):
        number = 0
    if number < 1 or number > 2**31 - 1:
        raise RegistryError(
            422, 42202, f"The specified version '{text}' is not a valid version id. Allowed values "
                        f"are between [1, 2^31-1] and the string \"latest\"")
    return number


def _bool(params: dict, key: str) -> bool:
    return str(params.get(key, "false")).lower() == "true"


# ==================================================================================================
# HTTP
# ==================================================================================================

Route = tuple[str, "re.Pattern[str]", Callable[..., Any]]


class _Handler(BaseHTTPRequestHandler):
    server_version = "icefloe-test-schema-registry/1.0"
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        try:  # answer in one segment: avoids Nagle/delayed-ACK stalls on keep-alive connections
            import socket

            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, AttributeError):
            pass

    def log_message(self, format: str, *args: Any) -> None:  # silence
        pass

    def _send(self, status: int, body: Any, raw: bool = False,
              extra_headers: dict | None = None) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode("utf-8") if raw else \
            json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if raw else CONTENT_TYPE)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        server: SchemaRegistryServer = self.server.registry  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length) if length else b""
        server.requests.append((method, path))
        fault = server._take_fault(path)
        if fault is not None:
            self._send(fault, {"error_code": 50001 if fault >= 500 else fault,
                               "message": "Injected failure"})
            return
        if server.users is not None and not self._authorized(server.users):
            self._send(401, {"error_code": 401, "message": "Unauthorized"},
                       extra_headers={"WWW-Authenticate": 'Basic realm="SchemaRegistry"'})
            return
        body: Any = None
        if raw_body:
            try:
                body = json.loads(raw_body)
            except ValueError:
                self._send(400, {"error_code": 400, "message": "Unrecognized request body"})
                return
        for route_method, pattern, fn in server.routes:
            if route_method != method:
                continue
            m = pattern.fullmatch(path)
            if m is None:
                continue
            args = [unquote(g) for g in m.groups()]
            try:
                with server.state.lock:
                    result = fn(*args, params=params, body=body)
            except RegistryError as exc:
                self._send(exc.status, {"error_code": exc.error_code, "message": exc.message})
                return
            except Exception as exc:  # noqa: BLE001  # pragma: no cover - a bug in the test server: a 500, as the real one
                self._send(500, {"error_code": 50001,
                                 "message": f"Error in the backend data store: {exc!r}"})
                return
            if isinstance(result, _Raw):
                self._send(200, result.text, raw=True)
            else:
                self._send(200, result)
            return
        self._send(404, {"error_code": 404, "message": "HTTP 404 Not Found"})

    def _authorized(self, users: dict[str, str]) -> bool:
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:]).decode("utf-8").partition(":")
        except ValueError:  # binascii.Error, UnicodeDecodeError
            return False
        return users.get(user) == password

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")


@dataclass
class _Raw:
    text: str


class SchemaRegistryServer:
    """The test registry: ``ThreadingHTTPServer`` in a daemon thread on a free loopback port."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *,
                 users: dict[str, str] | None = None, ssl_context: Any = None):
        self.state = RegistryState()
        self.users = users
        self.requests: list[tuple[str, str]] = []
        self._faults: list[_Fault] = []
        self._fault_lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.registry = self  # type: ignore[attr-defined]
        if ssl_context is not None:
            self._httpd.socket = ssl_context.wrap_socket(self._httpd.socket, server_side=True)
        self.scheme = "https" if ssl_context is not None else "http"
        self.host, self.port = self._httpd.server_address[:2]
        self.routes = self._routes()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def start(self) -> "SchemaRegistryServer":
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                            name="test-schema-registry", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> "SchemaRegistryServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def reset(self) -> None:
        with self.state.lock:
            self.state.reset()
        self.requests.clear()
        with self._fault_lock:
            self._faults.clear()

    def inject_failures(self, count: int, status: int = 503, path_prefix: str | None = None) -> None:
        """Answer the next ``count`` requests (under ``path_prefix``) with HTTP ``status``."""
        with self._fault_lock:
            self._faults.append(_Fault(count, status, path_prefix))

    def clear_failures(self) -> None:
        with self._fault_lock:
            self._faults.clear()

    def _take_fault(self, path: str) -> int | None:
        with self._fault_lock:
            for fault in self._faults:
                if fault.remaining > 0 and (fault.path_prefix is None
                                            or path.startswith(fault.path_prefix)):
                    fault.remaining -= 1
                    return fault.status
        return None

    # -- routes --

    def _routes(self) -> list[Route]:
        st = self.state
        S = r"([^/]+)"

        def get_schema(schema_id: str, params: dict, body: Any) -> Any:
            s = st.schemas.get(_int_or(schema_id))
            if s is None:
                raise _schema_not_found(schema_id)
            out = st.schema_body(s, params.get("format"))
            if _bool(params, "fetchMaxId"):
                out["maxId"] = max(st.schemas)
            return out

        def get_schema_text(schema_id: str, params: dict, body: Any) -> Any:
            s = st.schemas.get(_int_or(schema_id))
            if s is None:
                raise _schema_not_found(schema_id)
            return _Raw(st.types.render(s, params.get("format")))

        def get_by_guid(guid: str, params: dict, body: Any) -> Any:
            schema_id = st.by_guid.get(guid)
            if schema_id is None:
                raise RegistryError(404, 40403, f"Schema {guid} not found")
            out = st.schema_body(st.schemas[schema_id], params.get("format"))
            out["id"] = schema_id
            return out

        def schema_versions(schema_id: str, params: dict, body: Any) -> Any:
            sid = _int_or(schema_id)
            if sid not in st.schemas:
                raise _schema_not_found(schema_id)
            deleted = _bool(params, "deleted")
            return [{"subject": subject, "version": v.version}
                    for subject in sorted(st.subjects) for v in st.versions(subject, deleted)
                    if v.schema_id == sid]

        def schema_subjects(schema_id: str, params: dict, body: Any) -> Any:
            return sorted({x["subject"] for x in schema_versions(schema_id, params, body)})

        def types(params: dict, body: Any) -> Any:
            return ["JSON", "PROTOBUF", "AVRO"]

        def subjects(params: dict, body: Any) -> Any:
            deleted = _bool(params, "deleted")
            prefix = params.get("subjectPrefix", "")
            return sorted(s for s in st.subjects
                          if st.versions(s, deleted) and s.startswith(prefix))

        def subject_versions(subject: str, params: dict, body: Any) -> Any:
            return [v.version for v in st.require_subject(subject, _bool(params, "deleted"))]

        def get_version(subject: str, version: str, params: dict, body: Any) -> Any:
            v = st.resolve_version(subject, version, _bool(params, "deleted"))
            return st.version_body(subject, v, params.get("format"))

        def get_version_schema(subject: str, version: str, params: dict, body: Any) -> Any:
            v = st.resolve_version(subject, version, _bool(params, "deleted"))
            return _Raw(st.types.render(st.schemas[v.schema_id], params.get("format")))

        def referenced_by(subject: str, version: str, params: dict, body: Any) -> Any:
            v = st.resolve_version(subject, version)
            return sorted(s.id for s in st.schemas.values()
                          if any(r["subject"] == subject and int(r["version"]) == v.version
                                 for r in s.references))

        def register(subject: str, params: dict, body: Any) -> Any:
            if not isinstance(body, dict):
                raise RegistryError(422, 42201, "Invalid schema: the request has no schema")
            if st.mode == "READONLY":
                raise RegistryError(422, 42205, "Subject is in read-only mode")
            return st.register(subject, body, _bool(params, "normalize"))

        def lookup(subject: str, params: dict, body: Any) -> Any:
            if not isinstance(body, dict):
                raise RegistryError(422, 42201, "Invalid schema: the request has no schema")
            return st.lookup(subject, body, _bool(params, "normalize"), _bool(params, "deleted"))

        def delete_subject(subject: str, params: dict, body: Any) -> Any:
            permanent = _bool(params, "permanent")
            all_versions = st.subjects.get(subject, [])
            if not all_versions:
                raise _subject_not_found(subject)
            live = [v for v in all_versions if not v.deleted]
            if permanent:
                if live:
                    raise RegistryError(404, 40405, f"Subject '{subject}' was not deleted first "
                                                    f"before being permanently deleted")
                del st.subjects[subject]
                st.subject_levels.pop(subject, None)
                return [v.version for v in all_versions]
            if not live:
                raise RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set "
                                                f"permanent=true to delete permanently")
            for v in live:
                v.deleted = True
            return [v.version for v in live]

        def delete_version(subject: str, version: str, params: dict, body: Any) -> Any:
            permanent = _bool(params, "permanent")
            all_versions = st.subjects.get(subject, [])
            if not all_versions:
                raise _subject_not_found(subject)
            if version in ("latest", "-1"):
                live = [v for v in all_versions if not v.deleted]
                if not live:
                    raise _subject_not_found(subject)
                target = live[-1]
            else:
                number = _parse_version(version)
                target = next((v for v in all_versions if v.version == number), None)
                if target is None:
                    raise _version_not_found(number)
            if permanent:
                if not target.deleted:
                    raise RegistryError(404, 40407, f"Subject '{subject}' Version "
                                                    f"{target.version} was not deleted first "
                                                    f"before being permanently deleted")
                all_versions.remove(target)
                if not all_versions:
                    del st.subjects[subject]
                return target.version
            if target.deleted:
                raise RegistryError(404, 40406, f"Subject '{subject}' Version {target.version} was "
                                                f"soft deleted.Set permanent=true to delete "
                                                f"permanently")
            target.deleted = True
            return target.version

        def _level(body: Any) -> str:
            level = (body or {}).get("compatibility") if isinstance(body, dict) else None
            if not isinstance(level, str) or level.upper() not in LEVELS:
                raise RegistryError(422, 42203, "Invalid compatibility level. Valid values are "
                                                "none, backward, forward, full, "
                                                "backward_transitive, forward_transitive, and "
                                                "full_transitive")
            return level.upper()

        def get_config(params: dict, body: Any) -> Any:
            return {"compatibilityLevel": st.global_level}

        def put_config(params: dict, body: Any) -> Any:
            st.global_level = _level(body)
            return {"compatibility": st.global_level}

        def delete_config(params: dict, body: Any) -> Any:
            previous = st.global_level
            st.global_level = "BACKWARD"
            return {"compatibilityLevel": previous}

        def get_subject_config(subject: str, params: dict, body: Any) -> Any:
            if subject in st.subject_levels:
                return {"compatibilityLevel": st.subject_levels[subject]}
            if _bool(params, "defaultToGlobal"):
                return {"compatibilityLevel": st.global_level}
            raise RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level "
                                            f"compatibility configured")

        def put_subject_config(subject: str, params: dict, body: Any) -> Any:
            st.subject_levels[subject] = _level(body)
            return {"compatibility": st.subject_levels[subject]}

        def delete_subject_config(subject: str, params: dict, body: Any) -> Any:
            if subject not in st.subject_levels:
                raise _subject_not_found(subject)
            return {"compatibilityLevel": st.subject_levels.pop(subject)}

        def _candidate(body: Any, normalize: bool) -> StoredSchema:
            if not isinstance(body, dict):
                raise RegistryError(422, 42201, "Invalid schema: the request has no schema")
            schema_type = (body.get("schemaType") or "AVRO").upper()
            refs = body.get("references") or []
            text, key, parsed = st.types.prepare(schema_type, body.get("schema"), refs, normalize)
            return StoredSchema(0, schema_type, text, refs, "", key, None, None, parsed)

        def _compat_response(messages: list[str], params: dict) -> dict:
            out: dict[str, Any] = {"is_compatible": not messages}
            if _bool(params, "verbose"):
                out["messages"] = messages
            return out

        def compatibility(subject: str, version: str, params: dict, body: Any) -> Any:
            candidate = _candidate(body, _bool(params, "normalize"))
            live = st.versions(subject)
            if version in ("latest", "-1"):
                target = live[-1:] if live else []
            else:
                number = _parse_version(version)
                found = [v for v in live if v.version == number]
                if not found:
                    raise _version_not_found(number)
                target = found
            level = st.level(subject)
            messages = st.types.check(level, candidate, [st.schemas[v.schema_id] for v in target])
            return _compat_response(messages, params)

        def compatibility_all(subject: str, params: dict, body: Any) -> Any:
            candidate = _candidate(body, _bool(params, "normalize"))
            previous = [st.schemas[v.schema_id] for v in st.versions(subject)]
            return _compat_response(st.types.check(st.level(subject), candidate, previous), params)

        def get_mode(params: dict, body: Any) -> Any:
            return {"mode": st.mode}

        def put_mode(params: dict, body: Any) -> Any:
            mode = (body or {}).get("mode") if isinstance(body, dict) else None
            if mode not in ("READWRITE", "READONLY", "IMPORT"):
                raise RegistryError(422, 42204, "Invalid mode. Valid values are READWRITE, "
                                                "READONLY and IMPORT.")
            st.mode = mode
            return {"mode": mode}

        def root(params: dict, body: Any) -> Any:
            return {}

        def c(p: str) -> "re.Pattern[str]":
            return re.compile(p)

        return [
            ("GET", c(r"/"), root),
            ("GET", c(r"/schemas/types"), types),
            ("GET", c(rf"/schemas/ids/{S}"), get_schema),
            ("GET", c(rf"/schemas/ids/{S}/schema"), get_schema_text),
            ("GET", c(rf"/schemas/ids/{S}/versions"), schema_versions),
            ("GET", c(rf"/schemas/ids/{S}/subjects"), schema_subjects),
            ("GET", c(rf"/schemas/guids/{S}"), get_by_guid),
            ("GET", c(r"/subjects"), subjects),
            ("GET", c(rf"/subjects/{S}/versions"), subject_versions),
            ("GET", c(rf"/subjects/{S}/versions/{S}"), get_version),
            ("GET", c(rf"/subjects/{S}/versions/{S}/schema"), get_version_schema),
            ("GET", c(rf"/subjects/{S}/versions/{S}/referencedby"), referenced_by),
            ("POST", c(rf"/subjects/{S}/versions"), register),
            ("POST", c(rf"/subjects/{S}"), lookup),
            ("DELETE", c(rf"/subjects/{S}"), delete_subject),
            ("DELETE", c(rf"/subjects/{S}/versions/{S}"), delete_version),
            ("GET", c(r"/config"), get_config),
            ("PUT", c(r"/config"), put_config),
            ("DELETE", c(r"/config"), delete_config),
            ("GET", c(rf"/config/{S}"), get_subject_config),
            ("PUT", c(rf"/config/{S}"), put_subject_config),
            ("DELETE", c(rf"/config/{S}"), delete_subject_config),
            ("POST", c(rf"/compatibility/subjects/{S}/versions/{S}"), compatibility),
            ("POST", c(rf"/compatibility/subjects/{S}/versions"), compatibility_all),
            ("GET", c(r"/mode"), get_mode),
            ("PUT", c(r"/mode"), put_mode),
        ]


def _int_or(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return -1


# ==================================================================================================
# pytest plugin (imported lazily: this module is usable without pytest)
# ==================================================================================================

def _define_fixtures() -> None:
    try:
        import pytest
    except ImportError:  # pragma: no cover
        return

    @pytest.fixture(scope="session")
    def schema_registry():
        """A running test Schema Registry (session-wide; use unique subject names per test)."""
        with SchemaRegistryServer() as server:
            yield server

    globals()["schema_registry"] = schema_registry


_define_fixtures()


if __name__ == "__main__":  # pragma: no cover - manual use
    import time

    with SchemaRegistryServer(port=8081) as srv:
        print(f"Schema Registry listening on {srv.url}")
        while True:
            time.sleep(3600)
