"""Tool search for `discover_tools`: analyzer → fields (BM25F) → postings → ranked hits."""

from mcpmanager.core.search.document import Hit, SearchDoc
from mcpmanager.core.search.index import SearchIndex

__all__ = ["Hit", "SearchDoc", "SearchIndex"]
