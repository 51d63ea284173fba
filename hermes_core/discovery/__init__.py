"""Internals of plugin discovery; the public API is :mod:`hermes_core.plugins`.

One module per concern: ``policy`` (allow/block lists), ``entry_points``
(installed distributions), ``folders`` (``plugins/<name>/`` directories),
``extract`` (turning whatever a plugin exposes into a provider instance),
``adapter`` (completing provider objects that do not subclass the contract),
``info`` (the listing entry and probing) and ``registry`` (the pluggy manager).
What a Hermes Agent plugin needs from its host lives in
:mod:`hermes_core.hermes_compat`.
"""
