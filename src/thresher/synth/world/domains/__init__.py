"""One renderer per domain: encyclopedia pages, annual filings, patents, email threads."""
