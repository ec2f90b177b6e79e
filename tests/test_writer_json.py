"""JSON writer: the model round-trips, and the output validates against document.schema.json."""

from __future__ import annotations

import copy
import json
import re

import pytest

from render_pool.engine import model
from render_pool.engine.json.writer import SCHEMA_PATH, write_json
from render_pool.engine.model import Document, Image, Resource, Text
from tests.model_samples import PNG, P, full_document

# ----------------------------------------------------------------- a minimal JSON Schema check
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _type_ok(value, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def validate(value, schema: dict, root: dict, path: str = "$") -> list[str]:
    """Errors of ``value`` against the subset of JSON Schema the schema file uses."""
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/$defs/"), ref
        return validate(value, root["$defs"][ref.split("/")[-1]], root, path)
    errors: list[str] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_ok(value, n) for n in names):
            return [f"{path}: expected {names}, got {type(value).__name__}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if "minimum" in schema and isinstance(value, int) and value < schema["minimum"]:
        errors.append(f"{path}: below {schema['minimum']}")
    if "maximum" in schema and isinstance(value, int) and value > schema["maximum"]:
        errors.append(f"{path}: above {schema['maximum']}")
    if "oneOf" in schema:
        matches = [s for s in schema["oneOf"] if not validate(value, s, root, path)]
        if len(matches) != 1:
            kind = value.get("type") if isinstance(value, dict) else type(value).__name__
            errors.append(f"{path}: {len(matches)} alternatives match ({kind})")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{path}: missing {name}")
        for name, item in value.items():
            if name in props:
                errors += validate(item, props[name], root, f"{path}.{name}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected {name}")
            elif isinstance(schema.get("additionalProperties"), dict):
                errors += validate(item, schema["additionalProperties"], root, f"{path}.{name}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += validate(item, schema["items"], root, f"{path}[{i}]")
    return errors


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


# ----------------------------------------------------------------- tests
def test_envelope_fields():
    data = json.loads(write_json(full_document()))
    assert data["schema"] == "docservice.document"
    assert data["version"] == model.SCHEMA_VERSION
    assert data["meta"] == {"title": "Sample Document", "author": "Tester"}
    assert data["warnings"] == ["sample warning"]
    assert set(data["notes"]) == {"n1", "n2"}
    assert data["blocks"][0] == {"type": "Heading", "level": 1, "anchor": "", "children": [
        {"type": "Text", "text": "Main "},
        {"type": "Emph", "children": [{"type": "Text", "text": "Title"}]}]}


def test_model_round_trips():
    doc = full_document()
    data = json.loads(write_json(doc))
    assert model.from_dict(data["blocks"]) == doc.blocks
    assert {k: model.from_dict(v) for k, v in data["notes"].items()} == doc.notes


def test_resources_resolved():
    doc = full_document()
    res = json.loads(write_json(doc))["resources"]
    assert res["img1"]["mime"] == "image/png" and res["img1"]["size"] == len(PNG)
    assert res["img1"]["src"].startswith("data:image/png;base64,")
    # Image nodes keep the resource key; the saved link comes from the resolver
    linked = json.loads(write_json(doc, lambda key: f"https://s3.test/{key}.png"))
    assert linked["resources"]["img1"]["src"] == "https://s3.test/img1.png"
    assert '"src": "img1"' in write_json(doc)


def test_pretty_utf8():
    doc = Document([P("中文 and émoji ✓")])
    out = write_json(doc)
    assert "中文 and émoji ✓" in out and "\\u" not in out
    assert out.startswith("{\n  ")


def test_output_validates_against_schema(schema):
    for doc in (full_document(), Document(), Document([P(Image("https://x.test/a.png"))],
                                                     resources={"r": Resource(b"x", "image/gif")})):
        data = json.loads(write_json(doc))
        assert validate(data, schema, schema) == []


def test_validator_rejects_bad_documents(schema):
    good = json.loads(write_json(full_document()))
    bad = copy.deepcopy(good)
    bad["blocks"][0]["type"] = "Bogus"
    assert validate(bad, schema, schema)
    bad = copy.deepcopy(good)
    del bad["blocks"][0]["level"]
    assert validate(bad, schema, schema)
    bad = copy.deepcopy(good)
    bad["blocks"][1]["children"].append({"type": "Paragraph", "children": []})  # block in inline
    assert validate(bad, schema, schema)
    bad = copy.deepcopy(good)
    bad["resources"]["img1"]["size"] = "12"
    assert validate(bad, schema, schema)
    bad = copy.deepcopy(good)
    bad["schema"] = "other"
    assert validate(bad, schema, schema)


def test_schema_names_every_node_type(schema):
    """A new model node must be added to the schema (and the docs) too."""
    names = {n for n in schema["$defs"] if n[0].isupper()}
    assert names == set(model._NODE_TYPES)
    assert Text.__name__ in names
