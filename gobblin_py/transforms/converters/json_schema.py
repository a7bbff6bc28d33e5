"""Gobblin's JSON intermediate schema: parsed into a tree, printed as the Avro schema Gobblin makes of it.

The intermediate schema is a JSON array of columns ``{"columnName", "dataType": {"type", …}, "isNullable",
"comment"}`` (what CSV, REST and Salesforce-style sources describe their records with). Type names are matched
case-insensitively: ``string int long float double boolean bytes date timestamp time null enum array map
record``, or a two-element list for a union. ``isNullable`` is JSON ``true`` or the text ``"true"``; one written
inside ``dataType`` is ignored, as Gobblin ignores it.

The Avro schema follows Gobblin's ``JsonElementConversionFactory`` to the letter, so that its tests' expected
schemas hold: every field and type carries ``source.type``, docs default to ``""``, nullable fields are
``["null", T]`` with ``"default": null``, date/timestamp/time are ``long``, a record's children take the
namespace ``<parent namespace>.<parent name>``, maps and union branches pass none on, an anonymous record or
enum has no namespace and gives none to its children, and a ``namespace`` key is printed only where it differs
from the enclosing one (``""`` for none inside one). Avro files need every record and enum named: the
*writable* form names an anonymous one after its column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from gobblin_py.sdk.errors import UsageError

PRIMITIVES = {"string": ("string", pa.string()), "int": ("int", pa.int32()), "long": ("long", pa.int64()),
              "float": ("float", pa.float32()), "double": ("double", pa.float64()),
              "boolean": ("boolean", pa.bool_()), "bytes": ("bytes", pa.binary()), "date": ("long", pa.int64()),
              "timestamp": ("long", pa.int64()), "time": ("long", pa.int64()), "null": ("null", pa.null())}
COMPLEX = ("enum", "array", "map", "record")
TIME_KINDS = ("date", "timestamp", "time")


class SchemaError(UsageError):
    """A JSON intermediate schema Gobblin would refuse, naming the column."""


@dataclass
class Node:
    """One type of the schema tree."""

    kind: str
    nullable: bool = False
    name: str | None = None  # records and enums; None: anonymous
    namespace: str | None = None
    symbols: list[str] = field(default_factory=list)
    items: Node | None = None
    values: Node | None = None
    fields: list[Field] = field(default_factory=list)
    branches: list[Node] = field(default_factory=list)
    column: str = ""  # the column it belongs to (for messages and writable names)

    @property
    def union_null(self) -> bool:
        """A union with a ``null`` branch: in Arrow, the other branch, nullable."""
        return self.kind == "union" and any(b.kind == "null" for b in self.branches)

    def element(self) -> Node:
        """An array's items or a map's values (parsing sets the one its kind has)."""
        element = self.items if self.kind == "array" else self.values
        assert element is not None, f"a {self.kind} node without its element type"
        return element

    def arrow_type(self) -> pa.DataType:
        if self.kind in PRIMITIVES:
            return PRIMITIVES[self.kind][1]
        if self.kind == "enum":
            return pa.string()
        if self.kind == "array":
            return pa.list_(pa.field("item", self.element().arrow_type(), True))
        if self.kind == "map":
            return pa.map_(pa.string(), pa.field("value", self.element().arrow_type(), True))
        if self.kind == "record":
            return pa.struct([pa.field(f.name, f.node.arrow_type(), True) for f in self.fields])
        others = [b for b in self.branches if b.kind != "null"]
        if self.union_null:
            return others[0].arrow_type() if others else pa.null()
        return pa.dense_union([pa.field(str(i), b.arrow_type(), True) for i, b in enumerate(self.branches)])


@dataclass
class Field:
    name: str
    node: Node
    doc: str = ""


def _nullable(obj: dict) -> bool:
    value = obj.get("isNullable")
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _type_name(raw: Any, column: str) -> str:
    name = str(raw).lower()
    if name not in PRIMITIVES and name not in COMPLEX:
        raise SchemaError(f"column {column!r}: type {raw!r} is not a Gobblin JSON schema type "
                          f"(use {', '.join([*PRIMITIVES, *COMPLEX])})")
    return name


def parse_column(obj: Any, namespace: str | None) -> Field:
    """One column object ``{"columnName", "dataType", "isNullable", "comment"}`` under ``namespace``."""
    if not isinstance(obj, dict):
        raise SchemaError(f"a column must be a JSON object, not {json_text(obj)}")
    column = str(obj.get("columnName", ""))
    data_type = obj.get("dataType")
    if not isinstance(data_type, dict):
        raise SchemaError(f"column {column!r}: dataType must be an object with a type")
    node = parse_type(data_type, namespace, column)
    node.nullable = _nullable(obj)
    comment = obj.get("comment")
    return Field(column, node, comment if isinstance(comment, str) else "")


def json_text(value: Any) -> str:
    import json

    return json.dumps(value)[:200]


def _element(raw: Any, namespace: str | None, column: str, what: str) -> Node:
    """An array item, map value or union branch: a type name, or ``{"dataType": {…}}``."""
    if isinstance(raw, str):
        return parse_type({"type": raw}, namespace, column)
    if isinstance(raw, dict) and isinstance(raw.get("dataType"), dict):
        node = parse_type(raw["dataType"], namespace, column)
        node.nullable = _nullable(raw)
        return node
    raise SchemaError(f"column {column!r}: {what} must be a type name or {{\"dataType\": …}}, not {json_text(raw)}")


def parse_type(data_type: dict, namespace: str | None, column: str) -> Node:
    """The node of a ``dataType`` object; ``namespace`` is the one its parent gives it."""
    raw = data_type.get("type")
    if isinstance(raw, list):
        if len(raw) != 2:
            raise SchemaError(f"column {column!r}: a union type lists exactly two types, not {json_text(raw)}")
        return Node("union", branches=[_element(b, None, column, "a union branch") for b in raw], column=column)
    kind = _type_name(raw, column)
    node = Node(kind, column=column)
    if kind == "enum":
        symbols = data_type.get("symbols")
        if not isinstance(symbols, list):
            raise SchemaError(f"column {column!r}: an enum needs dataType.symbols, a list")
        node.symbols = [str(s) for s in symbols]
        node.name = data_type.get("name") or None
        node.namespace = namespace if node.name else None
    elif kind == "array":
        if "items" not in data_type:
            raise SchemaError(f"column {column!r}: an array needs dataType.items")
        node.items = _element(data_type["items"], namespace, column, "dataType.items")
    elif kind == "map":
        values = data_type.get("values")
        if isinstance(values, list):  # Gobblin reads a list here as the fields of an anonymous record
            node.values = Node("record", fields=[parse_column(v, None) for v in values], column=column)
        elif values is None:
            raise SchemaError(f"column {column!r}: a map needs dataType.values, a type")
        else:
            node.values = _element(values, None, column, "dataType.values")
    elif kind == "record":
        node.name = data_type.get("name") or None
        node.namespace = namespace if node.name else None
        child_ns = f"{namespace}.{node.name}" if namespace and node.name else None
        values = data_type.get("values")
        if not isinstance(values, list):
            raise SchemaError(f"column {column!r}: a record needs dataType.values, a list of columns")
        node.fields = [parse_column(v, child_ns) for v in values]
    return node


def parse_schema(columns: Any, table: str | None, namespace: str | None) -> Node:
    """The root record of a JSON intermediate schema (a list of columns), named after the extract's table."""
    if not isinstance(columns, list):
        raise SchemaError(f"a JSON intermediate schema is a list of columns, not {json_text(columns)}")
    name = table or None
    child_ns = f"{namespace}.{name}" if namespace and name else None
    return Node("record", name=name, namespace=namespace if name else None,
                fields=[parse_column(c, child_ns) for c in columns], column="")


# -- the Avro schema ---------------------------------------------------------------------------------------------

class _Namer:
    """Names for anonymous records and enums in the writable form (unique within one schema)."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def name(self, node: Node) -> str:
        from gobblin_py.formats.avro import avro_name

        base = avro_name(node.column or node.kind)
        candidate, n = base, 1
        while candidate in self.used:
            n += 1
            candidate = f"{base}_{n}"
        self.used.add(candidate)
        return candidate


def avro_type(node: Node, current: str | None = None, namer: _Namer | None = None) -> Any:
    """The Avro schema of a node (``namer`` given: the writable form), nullable ones wrapped in a union."""
    schema = _bare(node, current, namer)
    return ["null", schema] if node.nullable and node.kind not in ("union", "null") else schema


def _bare(node: Node, current: str | None, namer: _Namer | None) -> Any:
    if node.kind in PRIMITIVES:
        return {"type": PRIMITIVES[node.kind][0], "source.type": node.kind}
    if node.kind == "union":
        return [avro_type(b, current, namer) for b in node.branches]
    if node.kind == "array":
        return {"type": "array", "items": avro_type(node.element(), current, namer), "source.type": "array"}
    if node.kind == "map":
        return {"type": "map", "values": avro_type(node.element(), current, namer), "source.type": "map"}
    out: dict[str, Any] = {"type": node.kind}
    name = node.name or (namer.name(node) if namer is not None else None)
    if name:
        out["name"] = name
    if namer is not None and node.name:
        namer.used.add(node.name)
    if node.namespace != current:
        out["namespace"] = node.namespace or ""
    out["doc"] = ""
    if node.kind == "enum":
        out["symbols"] = list(node.symbols)
    else:
        inner = node.namespace if node.name else None
        out["fields"] = [avro_field(f, inner, namer) for f in node.fields]
    out["source.type"] = node.kind
    return out


def avro_field(f: Field, current: str | None, namer: _Namer | None = None) -> dict[str, Any]:
    schema = avro_type(f.node, current, namer)
    out: dict[str, Any] = {"name": f.name, "type": schema, "doc": f.doc}
    first = schema[0] if isinstance(schema, list) and schema else schema
    if first == "null" or (isinstance(first, dict) and first.get("type") == "null"):
        out["default"] = None
    out["source.type"] = f.node.kind
    return out


def avro_schema(root: Node, writable: bool = False) -> dict[str, Any]:
    """The Avro schema of the root record: Gobblin's exact form, or the writable one (every type named)."""
    namer = _Namer() if writable else None
    if writable and not root.name:
        root = Node("record", name="Record", fields=root.fields)
    return _bare(root, None, namer)


def arrow_schema(root: Node) -> pa.Schema:
    """The Arrow columns of the root record's fields (every field may hold nulls, as a missing one does)."""
    return pa.schema([pa.field(f.name, f.node.arrow_type(), True) for f in root.fields])
