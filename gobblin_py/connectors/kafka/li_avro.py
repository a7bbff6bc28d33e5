"""Gobblin's LinkedIn-Avro Kafka serializer (``LiAvroSerializer``) with its ``ConfigDrivenMd5SchemaRegistry``.

Each message is ``0x00`` (the magic byte), the 16-byte MD5 of the record's schema as Java Avro prints it
(``Schema.toString()``: compact JSON, ``type`` then ``name`` then ``namespace`` …), then the record in Avro's binary
encoding. The registry the job names gives schemas those MD5 ids; ``ConfigDrivenMd5SchemaRegistry`` (the only one
gpy has) registers nothing remote, so producing needs no server; a consumer's registry resolves the id.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import fastavro
import pyarrow as pa

from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.schema_meta import AVRO_SCHEMA, get_meta
from gobblin_py.sdk.settings import Scope, Settings, setting

MAGIC_BYTE = b"\x00"
P = "writer.kafka.producerConfig."
_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


@dataclass(frozen=True)
class Md5RegistrySettings(Settings):
    """The keys of :class:`ConfigDrivenMd5SchemaRegistry` (inside the producer's configuration)."""

    name: str | None = setting(P + "schemaRegistry.schema.name", scope=Scope.BRANCH,
                               doc="a schema registered under this name when the registry starts")
    value: str | None = setting(P + "schemaRegistry.schema.value", scope=Scope.BRANCH,
                                doc="that schema (Avro JSON)")


class ConfigDrivenMd5SchemaRegistry:
    """Gobblin's schema registry of MD5 ids, held in the producer (see the module)."""

    settings_class = Md5RegistrySettings


class LiAvroSerializer:
    """Gobblin's ``LiAvroSerializer``: magic byte, schema MD5, Avro binary (see the module)."""

    @staticmethod
    def values(batch: pa.RecordBatch, where: str) -> list[bytes]:
        """Each row of ``batch`` as a message value, in its Avro schema (the one its schema carries)."""
        text = get_meta(batch.schema, AVRO_SCHEMA)
        if not text:
            raise UsageError(f"{where}: LiAvroSerializer needs Avro records; these carry no Avro schema (add a "
                             "converter to Avro, such as WikipediaConverter or JsonIntermediateToAvroConverter)")
        schema = json.loads(text)
        prefix = MAGIC_BYTE + schema_id(schema)
        parsed = fastavro.parse_schema(schema)
        out = []
        for row in batch.to_pylist():
            buffer = io.BytesIO()
            buffer.write(prefix)
            fastavro.schemaless_writer(buffer, parsed, row)
            out.append(buffer.getvalue())
        return out


def schema_id(schema: Any) -> bytes:
    """The registry's id of a schema: the MD5 of its Java ``Schema.toString()`` in UTF-8."""
    return hashlib.md5(java_schema_string(schema).encode("utf-8")).digest()  # noqa: S324 - Gobblin's id, no security


def java_schema_string(schema: Any) -> str:
    """A schema as Java Avro's ``Schema.toString()`` prints it (compact, its key order, names once)."""
    return json.dumps(_java(schema, None, set()), separators=(",", ":"), ensure_ascii=False)


def _full(name: str, space: str | None) -> str:
    return name if "." in name or not space else f"{space}.{name}"


def _java(schema: Any, space: str | None, known: set[str]) -> Any:
    if isinstance(schema, list):
        return [_java(s, space, known) for s in schema]
    if isinstance(schema, str):
        if schema in _PRIMITIVES:
            return schema
        full = _full(schema, space)
        return full.rsplit(".", 1)[-1] if space and full.rsplit(".", 1)[0] == space else full
    kind = schema["type"]
    if not isinstance(kind, str) or (kind in _PRIMITIVES and len(schema) == 1):
        return _java(kind, space, known)
    out: dict[str, Any] = {"type": kind}
    if kind in ("record", "error", "enum", "fixed"):
        full = _full(schema["name"], schema.get("namespace", space))
        own = full.rsplit(".", 1)[0] if "." in full else None
        if full in known:
            return _java(full, space, known)
        known.add(full)
        out["name"] = full.rsplit(".", 1)[-1]
        if own != space:
            out["namespace"] = own or ""
        space = own
        if "doc" in schema:
            out["doc"] = schema["doc"]
        if kind == "enum":
            out["symbols"] = schema["symbols"]
        elif kind == "fixed":
            out["size"] = schema["size"]
        else:
            out["fields"] = [_field(f, space, known) for f in schema["fields"]]
    elif kind == "array":
        out["items"] = _java(schema["items"], space, known)
    elif kind == "map":
        out["values"] = _java(schema["values"], space, known)
    out.update(_props(schema, ("type", "name", "namespace", "doc", "fields", "symbols", "size", "items", "values",
                               "aliases")))
    if schema.get("aliases"):
        out["aliases"] = schema["aliases"]
    return out


def _field(field: Mapping[str, Any], space: str | None, known: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": field["name"], "type": _java(field["type"], space, known)}
    for key in ("doc", "default"):
        if key in field:
            out[key] = field[key]
    if field.get("order", "ascending") != "ascending":
        out["order"] = field["order"]
    if field.get("aliases"):
        out["aliases"] = field["aliases"]
    out.update(_props(field, ("name", "type", "doc", "default", "order", "aliases")))
    return out


def _props(node: Mapping[str, Any], reserved: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in reserved}
