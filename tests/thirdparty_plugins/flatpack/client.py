from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

_PLUGIN_DIR = str(Path(__file__).resolve().parent)
if _PLUGIN_DIR not in sys.path:
    sys.path.insert(0, _PLUGIN_DIR)

from config import FlatConfig  # noqa: E402

_LOCK = threading.Lock()


class FlatClient:
    def __init__(self, config: FlatConfig):
        self.path = Path(config.data_dir) / "flatpack.json"

    def all(self) -> list:
        return json.loads(self.path.read_text()) if self.path.exists() else []

    def add(self, text: str) -> None:
        with _LOCK:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.all() + [text]))
            os.replace(tmp, self.path)
