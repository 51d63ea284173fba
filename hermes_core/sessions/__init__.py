"""The L2 session store: every conversation in ``$HERMES_HOME/state.db``, searchable.

Modules, one concept each:

* :mod:`~hermes_core.sessions.schema` — tables, FTS5 indexes, triggers, migrations;
* :mod:`~hermes_core.sessions.layout` — what an existing file (ours or Hermes Agent's) holds;
* :mod:`~hermes_core.sessions.connection` — opening, WAL, write transactions with retry;
* :mod:`~hermes_core.sessions.store` — :class:`SessionStore`, the read/write API;
* :mod:`~hermes_core.sessions.records` — messages and sessions as rows: validation,
  encoding, decoding;
* :mod:`~hermes_core.sessions.deletion` — deleting sessions, and a prune's batches;
* :mod:`~hermes_core.sessions.query` — the query sanitiser (never raises);
* :mod:`~hermes_core.sessions.question` — recall planning for natural-language questions;
* :mod:`~hermes_core.sessions.cjk` and :mod:`~hermes_core.sessions.routing` — per-term
  routing between the word, trigram and CJK-gram indexes;
  :mod:`~hermes_core.sessions.gramqueue` fills the gram index;
* :mod:`~hermes_core.sessions.wordforms` — irregular English word forms (*buy*, *bought*);
* :mod:`~hermes_core.sessions.porter` — the word index's own Porter stems (both backends);
* :mod:`~hermes_core.sessions.search` — the search pipeline: plan, rank, fuse, snippets;
* :mod:`~hermes_core.sessions.fetch` — search filters, and running candidates against
  ``messages``;
* :mod:`~hermes_core.sessions.rerank` — ranking a question's hits by conversation coverage,
  replies next to asking turns;
* :mod:`~hermes_core.sessions.compounds` — glued compounds (*FlexGym*, *houseplants*);
* :mod:`~hermes_core.sessions.sessioninfo` — session fields of hits, cached per database version;
* :mod:`~hermes_core.sessions.lineage`, :mod:`~hermes_core.sessions.listing`,
  :mod:`~hermes_core.sessions.titles` — compression chains, listings, numbered titles;
* :mod:`~hermes_core.sessions.transcript` — transcripts for summaries, cut around matches;
* :mod:`~hermes_core.sessions.timespan` — the time span a question names (*last March*);
* :mod:`~hermes_core.sessions.semantic` — message vectors beside the file, nearest messages;
* :mod:`~hermes_core.sessions.importer` — JSONL import;
  :mod:`~hermes_core.sessions.datasets` reads LoCoMo and LongMemEval files;
* :mod:`~hermes_core.sessions.export` — JSONL export that the importer reads back;
* :mod:`~hermes_core.sessions.snapshot` — a consistent copy of a file being written;
* :mod:`~hermes_core.sessions.maintenance` — checking a file, rebuilding its indexes;
* :mod:`~hermes_core.sessions.recover` — salvaging the readable rows of a damaged file;
* :mod:`~hermes_core.sessions.scope`, :mod:`~hermes_core.sessions.bulk`,
  :mod:`~hermes_core.sessions.arguments` — user scoping, bulk import and argument checks,
  shared by both backends;
* :mod:`~hermes_core.sessions.backends` — choosing ``state.db`` or PostgreSQL
  (``sessions.url``); :mod:`~hermes_core.sessions.postgres` is the PostgreSQL store
  (:mod:`~hermes_core.sessions.pgschema` its migrations, :mod:`~hermes_core.sessions.pgsearch`
  and :mod:`~hermes_core.sessions.pgrerank` its search);
  :mod:`~hermes_core.sessions.migration` copies a store to the other backend.
"""

from __future__ import annotations

from hermes_core.sessions.query import ParsedQuery, parse_query
from hermes_core.sessions.schema import SCHEMA_VERSION
from hermes_core.sessions.store import SessionStore, default_db_path

__all__ = ["SCHEMA_VERSION", "ParsedQuery", "SessionStore", "default_db_path", "parse_query"]
