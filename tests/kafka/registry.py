"""A stand-in for Confluent's Schema Registry: the documented REST subset that gpy and confluent-kafka's client use.

No real schema registry can be installed on the test machines (it is a Java service outside any package index
here), so the tests serve the part of its REST API that readers and writers of Confluent's wire format call,
written from Confluent's API reference, on a loopback port in a thread:

- ``GET /schemas/ids/{id}`` → ``{"schema": "…"}`` (40403 when unknown);
- ``GET /subjects/{subject}/versions`` → ``[1, 2, …]`` (40401 when the subject is unknown);
- ``GET /subjects/{subject}/versions/{version|latest}`` → ``{"subject", "version", "id", "schema"}`` (40402);
- ``POST /subjects/{subject}/versions`` with ``{"schema": "…"}`` → ``{"id": …}`` (a schema already registered
  anywhere keeps its id; registering it again under a subject adds no version);
- ``POST /subjects/{subject}`` (look a schema up under a subject) → ``{"subject", "version", "id", "schema"}``.

Errors are the registry's ``{"error_code", "message"}`` bodies with its HTTP statuses. Compatibility is not
enforced (as a registry whose compatibility level is ``NONE``): tests register incompatible versions on purpose.
Query parameters (``normalize``, ``subject``, ``format``, …) are accepted and ignored.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit


class SchemaRegistry:
    """The registry's state (schemas by id, each subject's versions) behind a loopback HTTP server."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.schemas: list[str] = []  # id - 1 → schema text
        self.subjects: dict[str, list[int]] = {}  # subject → schema ids, version - 1 → id
        self.requests: list[str] = []  # "GET /schemas/ids/1", … in arrival order
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="schema-registry", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def register(self, subject: str, schema: dict[str, Any] | str) -> int:
        """Register ``schema`` under ``subject`` (as a client's POST would) and return its id."""
        text = schema if isinstance(schema, str) else json.dumps(schema)
        with self.lock:
            canonical = json.dumps(json.loads(text), sort_keys=True)
            known = [i for i, s in enumerate(self.schemas, 1) if json.dumps(json.loads(s), sort_keys=True) == canonical]
            schema_id = known[0] if known else len(self.schemas) + 1
            if not known:
                self.schemas.append(text)
            versions = self.subjects.setdefault(subject, [])
            if schema_id not in versions:
                versions.append(schema_id)
            return schema_id

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
        if len(parts) >= 2 and parts[0] == "subjects":
            subject = parts[1]
            if method == "POST" and len(parts) == 3 and parts[2] == "versions":
                if not body or "schema" not in body:
                    return 422, {"error_code": 42201, "message": "Input schema is an invalid Avro schema"}
                return 200, {"id": self.register(subject, body["schema"])}
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

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            return

    return Handler
