"""Storage engine for pipmem: an in-memory index flushed to JSON."""

import json
import re
from pathlib import Path


class Engine:
    def __init__(self, hermes_home: str):
        self.path = Path(hermes_home) / "pipmem.json"
        self.items = json.loads(self.path.read_text()) if self.path.exists() else []

    def remember(self, text: str) -> None:
        if text and text.strip():
            self.items.append(text.strip())
            self.flush()

    def search(self, query: str) -> list:
        words = set(re.findall(r"[a-z]{4,}", (query or "").lower()))
        return [i for i in self.items if words & set(re.findall(r"[a-z]{4,}", i.lower()))]

    def flush(self) -> None:
        self.path.write_text(json.dumps(self.items))
