"""A stand-in for Confluent's Schema Registry: the documented REST subset that gpy and confluent-kafka's client use.

No real schema registry can be installed on the test machines (it is a Java service outside any package index
here), so the tests serve the part of its REST API that readers and writers of Confluent's wire format call,
written from Confluent's API reference, on a loopback port in a thread:

- ``GET /schemas/ids/{id}`` → ``{"schema": "…"}`` (40403 when unknown);
- ``GET /subjects/{subject}/versions`` → ``[1, 2, …]`` (40401 when the subject is unknown);
- ``GET /subjects/{subject}/versions/{version|latest}`` → ``{"subject", "version", "id", "schema"}`` (40402);
- ``POST /subjects/{subject}/versions`` with ``{"schema": "…"}`` → ``{"id": …}`` (a schema already registered
  anywhere keeps its id; registering it again under a subject adds no version);
- ``POST /subjects/{subject}`` (look a schema up under a subject) → ``{"subject", "version", "id", "schema"}``;
- ``GET /config`` and ``GET /config/{subject}`` → ``{"compatibilityLevel": …}``; ``PUT /config`` and
  ``PUT /config/{subject}`` with ``{"compatibility": …}`` set the level (42203 for an unknown one);
- ``POST /compatibility/subjects/{subject}/versions/{version|latest}`` → ``{"is_compatible": …}``.

Errors are the registry's ``{"error_code", "message"}`` bodies with its HTTP statuses. Query parameters
(``normalize``, ``subject``, ``format``, …) are accepted and ignored.

Compatibility is enforced as the registry enforces it, at the level a subject has (its own, else the global
one): registering a new version that is incompatible answers 409 naming the subject, and adds nothing. The
checks are Apache Avro's own schema-resolution rules (``avro.compatibility``, a port of Java's
``SchemaCompatibility``, which Confluent's registry calls): BACKWARD, the new schema reads data written with the
latest version; FORWARD, the latest reads data written with the new one; FULL, both; ``_TRANSITIVE``, against
every version, not only the latest. The global level is ``NONE`` (the registry's default is BACKWARD): the session's
tests share the registry and some register incompatible versions on purpose; a test of the checks sets its
subject's level, as a user of a registry would.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")


def incompatibilities(level: str, new: str, earlier: list[str]) -> list[str]:
    """Why ``new`` may not follow the subject's ``earlier`` schemas (oldest first) at ``level``; [] if it may."""
    import avro.schema
    from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

    if level == "NONE" or not earlier:
        return []
    checked = earlier if level.endswith("_TRANSITIVE") else earlier[-1:]
    kind = level.removesuffix("_TRANSITIVE")
    candidate = avro.schema.parse(new)
    found = []
    for text in checked:
        old = avro.schema.parse(text)
        as_reader, as_writer = ("reader", candidate, old), ("writer", old, candidate)
        pairs = {"BACKWARD": [as_reader], "FORWARD": [as_writer], "FULL": [as_reader, as_writer]}[kind]
        for role, reader, writer in pairs:
            result = ReaderWriterCompatibilityChecker().get_compatibility(reader, writer)
            if result.compatibility is not SchemaCompatibilityType.compatible:
                what = "read data written with" if role == "reader" else "have its data read by"
                found.append(f"{kind}: the new schema cannot {what} an earlier one: "
                             f"{'; '.join(sorted(result.messages))} at {', '.join(sorted(result.locations))}")
    return found


class Incompatible(Exception):
    """A new version the subject's compatibility level refuses (the registry's 409)."""


class SchemaRegistry:
    """The registry's state (schemas by id, each subject's versions) behind a loopback HTTP server."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.schemas: list[str] = []  # id - 1 → schema text
        self.subjects: dict[str, list[int]] = {}  # subject → schema ids, version - 1 → id
        self.level = "NONE"  # the global compatibility level
        self.levels: dict[str, str] = {}  # a subject's own level
        self.requests: list[str] = []  # "GET /schemas/ids/1", … in arrival order
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="schema-registry", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def register(self, subject: str, schema: dict[str, Any] | str) -> int:
        """Register ``schema`` under ``subject`` (as a client's POST would) and return its id; raise
        :class:`Incompatible` when it would be a new version the subject's compatibility level refuses."""
        text = schema if isinstance(schema, str) else json.dumps(schema)
        with self.lock:
            canonical = json.dumps(json.loads(text), sort_keys=True)
            known = [i for i, s in enumerate(self.schemas, 1) if json.dumps(json.loads(s), sort_keys=True) == canonical]
            schema_id = known[0] if known else len(self.schemas) + 1
            versions = self.subjects.get(subject, [])
            if schema_id in versions:
                return schema_id  # registered already: no new version, nothing to check
            level = self.levels.get(subject, self.level)
            found = incompatibilities(level, text, [self.schemas[i - 1] for i in versions])
            if found:
                raise Incompatible(f'Schema being registered is incompatible with an earlier schema for subject '
                                   f'"{subject}", details: {found}')
            if not known:
                self.schemas.append(text)
            self.subjects.setdefault(subject, []).append(schema_id)
            return schema_id

    def set_compatibility(self, level: str, subject: str | None = None) -> None:
        """Set ``subject``'s compatibility level (the global one without a subject), as ``PUT /config`` does."""
        if level not in LEVELS:
            raise ValueError(f"Invalid compatibility level {level!r}")
        with self.lock:
            if subject is None:
                self.level = level
            else:
                self.levels[subject] = level

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- the REST API

    def answer(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, Any]:
        parts = [unquote(p) for p in urlsplit(path).path.strip("/").split("/")]
        with self.lock:
            self.requests.append(f"{method} {urlsplit(path).path}")
        if method == "GET" and len(parts) == 3 and parts[:2] == ["schemas", "ids"] and parts[2].isdigit():
            schema_id = int(parts[2])
            with self.lock:
                if not 1 <= schema_id <= len(self.schemas):
                    return 404, {"error_code": 40403, "message": f"Schema {schema_id} not found"}
                return 200, {"schema": self.schemas[schema_id - 1]}
        if parts[0] == "config" and len(parts) <= 2:
            return self._config(method, parts[1] if len(parts) == 2 else None, body)
        if method == "POST" and len(parts) == 5 and parts[:2] == ["compatibility", "subjects"] \
                and parts[3] == "versions":
            with self.lock:
                versions = [self.schemas[i - 1] for i in self.subjects.get(parts[2], [])]
                level = self.levels.get(parts[2], self.level)
            if parts[4].isdigit():  # against that version only
                versions, level = versions[int(parts[4]) - 1:int(parts[4])], level.removesuffix("_TRANSITIVE")
            return 200, {"is_compatible": not incompatibilities(level, (body or {}).get("schema", "null"), versions)}
        if len(parts) >= 2 and parts[0] == "subjects":
            subject = parts[1]
            if method == "POST" and len(parts) == 3 and parts[2] == "versions":
                if not body or "schema" not in body:
                    return 422, {"error_code": 42201, "message": "Input schema is an invalid Avro schema"}
                try:
                    return 200, {"id": self.register(subject, body["schema"])}
                except Incompatible as exc:
                    return 409, {"error_code": 409, "message": str(exc)}
            with self.lock:
                versions = list(self.subjects.get(subject, []))
            if not versions:
                return 404, {"error_code": 40401, "message": f"Subject '{subject}' not found."}
            if method == "POST" and len(parts) == 2:
                canonical = json.dumps(json.loads((body or {}).get("schema", "null")), sort_keys=True)
                for version, schema_id in enumerate(versions, 1):
                    if json.dumps(json.loads(self.schemas[schema_id - 1]), sort_keys=True) == canonical:
                        return 200, self._version(subject, version, schema_id)
                return 404, {"error_code": 40403, "message": "Schema not found"}
            if method == "GET" and len(parts) == 3 and parts[2] == "versions":
                return 200, list(range(1, len(versions) + 1))
            if method == "GET" and len(parts) == 4 and parts[2] == "versions":
                wanted = len(versions) if parts[3] in ("latest", "-1") else int(parts[3]) if parts[3].isdigit() else 0
                if not 1 <= wanted <= len(versions):
                    return 404, {"error_code": 40402, "message": f"Version {parts[3]} not found."}
                return 200, self._version(subject, wanted, versions[wanted - 1])
        return 404, {"error_code": 404, "message": f"HTTP 404 Not Found: {method} {path}"}

    def _config(self, method: str, subject: str | None, body: dict[str, Any] | None) -> tuple[int, Any]:
        if method == "PUT":
            level = (body or {}).get("compatibility", "")
            try:
                self.set_compatibility(level, subject)
            except ValueError as exc:
                return 422, {"error_code": 42203, "message": str(exc)}
            return 200, {"compatibility": level}
        with self.lock:
            return 200, {"compatibilityLevel": self.levels.get(subject, self.level) if subject else self.level}

    def _version(self, subject: str, version: int, schema_id: int) -> dict[str, Any]:
        return {"subject": subject, "version": version, "id": schema_id, "schema": self.schemas[schema_id - 1]}


def _handler(registry: SchemaRegistry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
                status, answer = registry.answer(method, self.path, body)
            except ValueError as exc:
                status, answer = 422, {"error_code": 42201, "message": f"Invalid schema: {exc}"}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._serve("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._serve("POST")

        def do_PUT(self) -> None:  # noqa: N802
            self._serve("PUT")

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            return

    return Handler
