"""Tool search for `discover_tools`: analyzer → fields (BM25F) → postings → ranked hits; and the one
identifier splitter that resolution shares."""
