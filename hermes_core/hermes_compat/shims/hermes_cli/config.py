"""``hermes_cli.config``: reading and writing ``$HERMES_HOME/config.yaml``."""

from hermes_core.config import cfg_get, load_config, save_config

__hermes_compat__ = True

__all__ = ["cfg_get", "load_config", "save_config"]
