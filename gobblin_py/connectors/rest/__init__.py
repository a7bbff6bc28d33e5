"""A generic HTTP/REST source (:mod:`.source`), its HTTP client with retries (:mod:`.http`) and JSON paths."""

from gobblin_py.connectors.rest.source import RestSource

__all__ = ["RestSource"]
