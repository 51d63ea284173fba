"""Tool schemas for the ledger plugin."""

SEARCH = {
    "name": "ledger_search",
    "description": "Full-text search over the ledger of past turns and saved memories.",
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Keywords."},
            "limit": {"type": "integer", "description": "Max results (default 10)."},
        },
        "required": ["query"],
    },
}

RECORD = {
    "name": "ledger_record",
    "description": "Record a fact in the ledger.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}
