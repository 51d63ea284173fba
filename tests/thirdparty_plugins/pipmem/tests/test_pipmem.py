"""The project's own tests (not part of the plugin)."""
