"""Internals of plugin discovery; the public API is :mod:`hermes_core.plugins`.

One module per concern: ``policy`` (allow/block lists), ``entry_points``
(installed distributions), ``folders`` (``plugins/<name>/`` directories),
``extract`` (turning whatever a plugin exposes into a provider instance),
``info`` (the listing entry and probing) and ``registry`` (the pluggy manager).
"""
