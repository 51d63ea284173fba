"""Sources of the Hermes module names; loaded only under those names by the finder."""
