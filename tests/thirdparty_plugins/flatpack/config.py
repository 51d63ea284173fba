from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class FlatConfig:
    data_dir: str = ""
    recall_limit: int = 5


def load_config(hermes_home: str) -> FlatConfig:
    overrides = {}
    path = Path(hermes_home) / "flatpack.json.cfg"
    if path.exists():
        overrides = json.loads(path.read_text())
    env_limit = os.environ.get("FLATPACK_RECALL_LIMIT")
    if env_limit:
        overrides["recall_limit"] = int(env_limit)
    overrides.setdefault("data_dir", str(Path(hermes_home) / "flatpack"))
    return FlatConfig(**overrides)
