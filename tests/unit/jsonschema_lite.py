"""A validator for the subset of JSON Schema (draft 2020-12) that
docs/schemas/*.schema.json use; standard library only.

Keywords: type (a name or a list of names), properties, required, items,
enum, const, additionalProperties (true, false or a schema), anyOf,
minimum, $ref to "#/$defs/NAME" of the same document, $defs; and the
annotations $schema, $id, title, description, which are read and not
checked.  Any other keyword is refused (SchemaError), so that a schema
never says more than this validator checks.

    errors = validate(instance, schema)     # [] when it validates
"""

from __future__ import annotations

from typing import Any

ANNOTATIONS = {"$schema", "$id", "title", "description", "$comment", "examples"}
KEYWORDS = {"type", "properties", "required", "items", "enum", "const",
            "additionalProperties", "anyOf", "minimum", "$ref", "$defs"} | ANNOTATIONS
TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}


class SchemaError(ValueError):
    """The schema itself is wrong, or uses a keyword outside the subset."""


def _is(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):             # JSON's true is no number
        return False
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float))
    raise SchemaError(f"unknown type {name!r}")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _where(path: str) -> str:
    return path or "(top)"


def _resolve(ref: str, root: dict) -> dict:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise SchemaError(f"$ref {ref!r}: only {prefix}NAME is supported")
    name = ref[len(prefix):]
    try:
        return root["$defs"][name]
    except (KeyError, TypeError):
        raise SchemaError(f"$ref {ref!r}: no such definition") from None


def _subset(schema: Any, path: str) -> None:
    """SchemaError unless `schema` is an object using only the subset's keywords."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{_where(path)}: a schema is an object or a boolean, not {schema!r}")
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise SchemaError(f"{_where(path)}: keyword(s) outside the subset: "
                          + ", ".join(sorted(unknown)))


def _check(value: Any, schema: Any, root: dict, path: str, out: list[str]) -> None:
    if schema is True:
        return
    if schema is False:
        out.append(f"{_where(path)}: no value is allowed here")
        return
    _subset(schema, path)
    if "$ref" in schema:
        _check(value, _resolve(schema["$ref"], root), root, path, out)
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        bad = [n for n in names if n not in TYPES]
        if bad:
            raise SchemaError(f"{_where(path)}: unknown type(s) {bad}")
        if not any(_is(value, n) for n in names):
            out.append(f"{_where(path)}: {type(value).__name__} {_short(value)} is not "
                       f"{' or '.join(names)}")
            return
    if "const" in schema and not _same(value, schema["const"]):
        out.append(f"{_where(path)}: {_short(value)} is not {schema['const']!r}")
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        out.append(f"{_where(path)}: {_short(value)} is not one of {schema['enum']}")
    if "minimum" in schema and _is(value, "number") and value < schema["minimum"]:
        out.append(f"{_where(path)}: {value} is below {schema['minimum']}")
    if "anyOf" in schema:
        tries = []
        for i, sub in enumerate(schema["anyOf"]):
            errs: list[str] = []
            _check(value, sub, root, path, errs)
            if not errs:
                break
            tries.append(f"[{i}] " + "; ".join(errs[:3]))
        else:
            out.append(f"{_where(path)}: matches none of anyOf: " + " | ".join(tries))
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{_where(path)}: {key!r} is missing")
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                _check(v, props[key], root, f"{path}.{key}", out)
            elif extra is not True:
                _check(v, extra, root, f"{path}.{key}", out)
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            _check(v, schema["items"], root, f"{path}[{i}]", out)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(instance: Any, schema: dict) -> list[str]:
    """What is wrong with ``instance`` against ``schema``, one message a
    fault with the path to it ([] when it validates).  SchemaError when
    the schema uses a keyword outside the subset or is malformed."""
    out: list[str] = []
    _check(instance, schema, schema, "", out)
    return out


def check_schema(schema: Any) -> None:
    """SchemaError unless every subschema of ``schema`` uses only the subset's
    keywords and every $ref resolves (without validating any instance)."""
    def walk(s: Any, root: dict, path: str) -> None:
        if isinstance(s, bool):
            return
        _subset(s, path)
        if "$ref" in s:
            _resolve(s["$ref"], root)
        if "type" in s:
            names = s["type"] if isinstance(s["type"], list) else [s["type"]]
            if not names or any(n not in TYPES for n in names):
                raise SchemaError(f"{_where(path)}: bad type {s['type']!r}")
        if "required" in s and not (isinstance(s["required"], list)
                                    and all(isinstance(k, str) for k in s["required"])):
            raise SchemaError(f"{_where(path)}: required is a list of names")
        if "enum" in s and not isinstance(s["enum"], list):
            raise SchemaError(f"{_where(path)}: enum is a list")
        for key, sub in s.get("properties", {}).items():
            walk(sub, root, f"{path}.{key}")
        for key, sub in s.get("$defs", {}).items():
            walk(sub, root, f"{path}$defs.{key}")
        for i, sub in enumerate(s.get("anyOf", [])):
            walk(sub, root, f"{path}anyOf[{i}]")
        for key in ("items", "additionalProperties"):
            if key in s:
                walk(s[key], root, f"{path}.{key}")
    if not isinstance(schema, dict):
        raise SchemaError("a schema document is an object")
    walk(schema, schema, "")
