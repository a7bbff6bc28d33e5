"""Gobblin's Wikipedia example on the MediaWiki API: :mod:`.source` (WikipediaSource, WikipediaExtractor) and
:mod:`.converter` (WikipediaConverter, WikipediaPartitioner), over the REST source's HTTP client."""

from gobblin_py.connectors.wikipedia.converter import WikipediaConverter, WikipediaPartitioner
from gobblin_py.connectors.wikipedia.source import WikipediaExtractor, WikipediaSource

__all__ = ["WikipediaConverter", "WikipediaExtractor", "WikipediaPartitioner", "WikipediaSource"]
