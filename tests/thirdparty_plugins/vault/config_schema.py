"""Setup-wizard schema and config persistence for the vault plugin.

Secrets (``VAULT_TOKEN``) live in ``$HERMES_HOME/.env``; everything else in
``$HERMES_HOME/vault.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

DEFAULTS = {"max_results": 5, "label": "Vault"}


def get_config_schema() -> List[Dict[str, Any]]:
    return [
        {
            "key": "token",
            "description": "Vault access token",
            "secret": True,
            "required": True,
            "env_var": "VAULT_TOKEN",
            "url": "https://vault.example/tokens",
        },
        {"key": "max_results", "description": "Facts recalled per turn", "type": "integer",
         "default": 5, "minimum": 1, "maximum": 20},
        {"key": "label", "description": "Name shown in the prompt", "default": "Vault"},
    ]


def settings_path(hermes_home: str) -> Path:
    return Path(hermes_home) / "vault.json"


def load_settings(hermes_home: str) -> Dict[str, Any]:
    path = settings_path(hermes_home)
    values = dict(DEFAULTS)
    if path.exists():
        try:
            values.update(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            pass
    return values


def save_config(values: Dict[str, Any], hermes_home: str) -> None:
    path = settings_path(hermes_home)
    existing = load_settings(hermes_home)
    existing.update({k: v for k, v in values.items() if k != "token"})
    path.write_text(json.dumps(existing, indent=2), encoding="utf-8")
