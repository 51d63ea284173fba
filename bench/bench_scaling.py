"""The session store on SQLite (``state.db``) against PostgreSQL, in one run.

Three measurements (``--parts``), each on both backends with the same data:

* **writers** — W processes (default 16, a gateway's workers), each appending
  messages one transaction at a time to its own session: throughput, p50/p99
  latency of one append, errors surfaced, and the CPU time the writers spent
  (wall time alone hides a backend that burns CPU waiting on a lock);
* **import** — SQLite's bulk import against one statement per message (its floor);
* **search** — latency per query class over a generated history of N messages
  (default 100,000): median and p95 wall time and the client's CPU time per query,
  PostgreSQL as a multiple of the SQLite FTS5 floor;
* **recall** — recall parity on every recall set of the benchmarks
  (``bench/eval/conversations.yaml`` alone and hidden in a generated haystack,
  ``people.yaml``, ``assistant.yaml``, ``friends.yaml``, and the public REALTALK
  chats when ``python bench/public_sets.py fetch`` has fetched them): session and
  message recall@k of ``search_messages`` on each backend (without semantic search,
  which only SQLite offers). The target: PostgreSQL within 0.02 of SQLite on every figure.

Each part's results are kept in ``bench/data/scaling.json`` (git-ignored), so the
parts (and the backends of the search part, ``--backends``) may run at different times
(under ``nice``, with the load noted) and still make one section of
``docs/benchmarks.md``. With ``--keep`` the search part's loaded stores stay
(``bench/data/scaling/state-N.db``, schema ``bench_scaling_N``) and later runs search
them without loading again (``--load-only`` loads and stops; ``--drop`` removes them).
PostgreSQL is ``$HERMES_BENCH_POSTGRES_URL`` (default the local test server); without
``--keep`` each run uses schemas of its own and drops them. Usage:
``python bench/bench_scaling.py [--parts writers,import,search,recall] [--writers 16]
[--appends 150] [--messages 100000,1000000] [--keep]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_sessions  # noqa: E402
import bench_sessions_recall as recall  # noqa: E402
import public_sets  # noqa: E402
import yaml  # noqa: E402
from report import percentile, write_section  # noqa: E402

from hermes_core.sessions.backends import open_session_store  # noqa: E402
from hermes_core.sessions.importer import read_jsonl  # noqa: E402

POSTGRES = os.environ.get("HERMES_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
QUERIES: dict[str, list[str]] = {
    "one word": ["garden", "budget", "camera", "guitar", "insurance"],
    "two keywords": ["flight hotel", "bread oven", "tax loan", "phone laptop", "rain snow"],
    "phrase": ['"summer holiday"', '"birthday party"', '"job interview"'],
    "prefix": ["photo*", "restau*", "mecha*"],
    "question": [
        "What did I say about the wedding budget?",
        "Where did we go camping last summer?",
        "How is my sister's new apartment?",
    ],
    "CJK 1 char": ["鸭", "猫"],
    "CJK 2 chars": ["烤鸭", "小猫"],
    "CJK 3+ chars": ["北京烤鸭", "我的小猫"],
    "no hit": ["xylophonequartz", "zzqv"],
}
CJK_LINES = ["我们昨天去吃了北京烤鸭", "我的小猫今天很开心", "周末想去爬山看风景"]


def schema_url(schema: str) -> str:
    """The bench server's URL with *schema* as the search path."""
    joiner = "&" if "?" in POSTGRES else "?"
    return f"{POSTGRES}{joiner}options={quote(f'-csearch_path={schema}')}"


@contextmanager
def pg_schema() -> Iterator[str]:
    import psycopg

    admin = psycopg.connect(POSTGRES, autocommit=True)
    schema = "bench_" + uuid.uuid4().hex[:10]
    admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema_url(schema)
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


def server_cpu() -> float:
    """CPU seconds the PostgreSQL backends serving this process's connections have used.

    The server runs on this machine: its backends are found by the client ports of
    this process's TCP sockets (``pg_stat_activity.client_port``) and read in ``/proc``.
    """
    import psycopg

    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/self/fd/{fd}")
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    ports = []
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[9] in inodes:
                    ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    with psycopg.connect(POSTGRES, autocommit=True) as admin:
        pids = [
            row[0]
            for row in admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE client_port = ANY(%s) "
                "AND pid <> pg_backend_pid()",
                (ports,),
            )
        ]
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


# -- concurrent writers ----------------------------------------------------------------------


def _writer(target: str, worker: int, appends: int, ready: Any, go: Any, out: Any) -> None:
    latencies: list[float] = []
    errors: list[str] = []
    with open_session_store(target, semantic="off") as store:
        session = f"gateway-{worker}"
        store.create_session(session, source="telegram")
        ready.put(worker)
        go.wait()
        start_cpu = time.process_time()
        for n in range(appends):
            began = time.perf_counter()
            try:
                store.append_message(session, "user", f"worker {worker} says hello number {n}")
            except Exception as exc:  # surfaced in the table, never hidden
                errors.append(f"{type(exc).__name__}: {exc}"[:120])
            latencies.append(time.perf_counter() - began)
        out.put((latencies, errors, time.process_time() - start_cpu, time.time()))


def writers(target: str, count: int, appends: int) -> dict[str, Any]:
    """*count* processes started and connected first, then appending at one signal."""
    context = multiprocessing.get_context("spawn")
    ready, out, go = context.Queue(), context.Queue(), context.Event()
    processes = [
        context.Process(target=_writer, args=(target, n, appends, ready, go, out))
        for n in range(count)
    ]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=300)
    began = time.time()
    go.set()
    results = [out.get(timeout=900) for _ in processes]
    for process in processes:
        process.join(60)
    wall = max(result[3] for result in results) - began
    latencies = [value for result in results for value in result[0]]
    errors = [error for result in results for error in result[1]]
    with open_session_store(target, semantic="off") as store:
        stored = store.message_count()
    return {
        "wall": wall,
        "rate": stored / wall,
        "p50": percentile(latencies, 50) * 1000,
        "p99": percentile(latencies, 99) * 1000,
        "errors": errors,
        "stored": stored,
        "expected": count * appends,
        "cpu": sum(result[2] for result in results),
    }


# -- search latency ----------------------------------------------------------------------------


def history(total: int) -> list[dict[str, Any]]:
    sessions = recall.everyday_sessions(total, seed=11)
    for n, session in enumerate(sessions[:300]):
        session["messages"][0]["content"] += " " + CJK_LINES[n % len(CJK_LINES)]
    return sessions


def fill(target: str, sessions: list[dict[str, Any]]) -> dict[str, float]:
    """Load *sessions* (500 per ``import_sessions`` call): wall, client and server CPU (s)."""
    began, began_cpu = time.perf_counter(), time.process_time()
    server = 0.0
    with open_session_store(target, semantic="off") as store:
        for start in range(0, len(sessions), 500):
            before = server_cpu() if "://" in target else 0.0
            store.import_sessions(sessions[start : start + 500])
            server += (server_cpu() - before) if "://" in target else 0.0
            if start // 500 % 20 == 0:
                print(f"  loaded {start + 500:,} sessions, {time.perf_counter() - began:.0f} s")
        if "://" in target:
            # As autovacuum would soon after (this server runs without it): the planner's
            # statistics, which the search reads for common words' frequencies too.
            before = server_cpu()
            store._write(lambda conn: conn.execute("ANALYZE messages"))
            server += server_cpu() - before
    return {
        "wall": time.perf_counter() - began,
        "cpu": time.process_time() - began_cpu,
        "server_cpu": server,
        "load": os.getloadavg()[0],
    }


def latencies(target: str, rounds: int) -> dict[str, tuple[float, float, float, float]]:
    """Per query class: median and p95 wall time, mean CPU time of this process and of the
    PostgreSQL backend (ms)."""
    found: dict[str, tuple[float, float, float, float]] = {}
    pg = "://" in target
    with open_session_store(target, semantic="off") as store:
        for label, queries in QUERIES.items():
            timings = []
            cpu = server = 0.0
            for query in queries:
                store.search_messages(query, limit=10)  # warm
                for _ in range(rounds):
                    before = server_cpu() if pg else 0.0
                    began, began_cpu = time.perf_counter(), time.process_time()
                    store.search_messages(query, limit=10)
                    timings.append((time.perf_counter() - began) * 1000)
                    cpu += (time.process_time() - began_cpu) * 1000
                    server += ((server_cpu() - before) * 1000) if pg else 0.0
            found[label] = (
                statistics.median(timings),
                percentile(timings, 95),
                cpu / len(timings),
                server / len(timings),
            )
            print(f"  {label}: {found[label][0]:.1f} ms", flush=True)
    return found


STORES = HERE / "data" / "scaling"
"""Where ``--keep`` leaves the SQLite files of the search part (git-ignored)."""


def kept(messages: int) -> tuple[str, str]:
    """The kept stores of *messages* messages: a ``state.db`` path and a PostgreSQL URL."""
    return str(STORES / f"state-{messages}.db"), schema_url(f"bench_scaling_{messages}")


def _stored_messages(target: str) -> int:
    """How many messages the kept store *target* holds (0 when it does not exist)."""
    if "://" not in target:
        if not Path(target).exists():
            return 0
    else:
        import psycopg

        schema = target.rsplit("search_path%3D", 1)[1]
        with psycopg.connect(POSTGRES, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    with open_session_store(target, semantic="off") as store:
        return store.message_count()


def drop_kept(messages: int, backend: str) -> None:
    """Remove the kept store of *messages* messages on *backend*."""
    import psycopg

    if backend == "sqlite":
        path = kept(messages)[0]
        for leftover in (path, path + "-wal", path + "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(leftover)
        return
    with psycopg.connect(POSTGRES, autocommit=True) as admin:
        admin.execute(f"DROP SCHEMA IF EXISTS bench_scaling_{messages} CASCADE")


def import_speed(messages: int) -> dict[str, Any]:
    """SQLite's ``import_sessions`` against one ``INSERT`` statement per message
    (``executemany``, how it wrote before), interleaved on the same data
    (``bench_sessions.build``: its floor)."""
    with tempfile.TemporaryDirectory() as tmp:
        return bench_sessions.build(Path(tmp), messages, batch=5_000)


# -- recall parity ------------------------------------------------------------------------------

RecallSet = Callable[[Any, Path], tuple[dict[tuple[str, int], int], list[dict[str, Any]]]]
"""Loads a set into a store (a scratch folder at hand): (turn -> message id, questions)."""


def _conversations(haystack: list[dict[str, Any]]) -> RecallSet:
    def load(store: Any, tmp: Path) -> tuple[dict[tuple[str, int], int], list[dict[str, Any]]]:
        for start in range(0, len(haystack), 500):
            store.import_sessions(haystack[start : start + 500])
        return recall.load(store)

    return load


def _imported(store: Any, sessions: list[dict[str, Any]]) -> dict[tuple[str, int], int]:
    store.import_sessions(sessions)
    return {
        (session["id"], n): message["id"]
        for session in sessions
        for n, message in enumerate(store.get_messages(session["id"]))
    }


def _people(store: Any, tmp: Path) -> tuple[dict[tuple[str, int], int], list[dict[str, Any]]]:
    data = yaml.safe_load(recall.PEOPLE.read_text(encoding="utf-8"))
    sessions = read_jsonl(recall.people_jsonl(data, tmp / "pairs.jsonl", True))
    return _imported(store, sessions), data["questions"]


def _assistant(store: Any, tmp: Path) -> tuple[dict[tuple[str, int], int], list[dict[str, Any]]]:
    data = yaml.safe_load(recall.ASSISTANT.read_text(encoding="utf-8"))
    path = tmp / "assistant.json"
    path.write_text(json.dumps([recall.longmemeval_instance(data)]), encoding="utf-8")
    return _imported(store, read_jsonl(path)), data["questions"]


def _friends(store: Any, tmp: Path) -> tuple[dict[tuple[str, int], int], list[dict[str, Any]]]:
    data = yaml.safe_load(recall.FRIENDS.read_text(encoding="utf-8"))
    path = tmp / "friends.json"
    path.write_text(json.dumps([recall.locomo_sample(data)]), encoding="utf-8")
    return _imported(store, read_jsonl(path)), recall.friends_questions(data)


def _realtalk_chat(sample: dict[str, Any], questions: list[dict[str, Any]]) -> RecallSet:
    def load(store: Any, tmp: Path) -> tuple[dict[tuple[str, int], int], list[dict[str, Any]]]:
        path = tmp / "chat.json"
        path.write_text(json.dumps([sample]), encoding="utf-8")
        return _imported(store, read_jsonl(path)), questions

    return load


def recall_hits(
    target: str, load: RecallSet, semantic: bool = False
) -> tuple[dict[str, float], int]:
    """Questions answered at each k (counts, not shares) by ``search_messages`` on *target*
    (*semantic*: every message embedded first, and meaning on)."""
    mode = "on" if semantic else "off"
    with open_session_store(target, semantic=mode) as store, tempfile.TemporaryDirectory() as tmp:
        turn_ids, questions = load(store, Path(tmp))
        session_of = dict(
            store._read(lambda c: c.execute("SELECT id, session_id FROM messages").fetchall())
        )
        ranker = recall.ours_ranker(store, semantic=semantic)  # type: ignore[arg-type]
        shares, _ = recall.evaluate(ranker, questions, turn_ids, session_of)
    return {key: value * len(questions) for key, value in shares.items()}, len(questions)


def recall_sets(haystack: int) -> list[tuple[str, list[RecallSet]]]:
    """The recall sets compared: name -> its parts (each loaded into a store of its own)."""
    sets: list[tuple[str, list[RecallSet]]] = [
        ("conversations.yaml", [_conversations([])]),
    ]
    if haystack:
        sets.append(
            (
                f"conversations.yaml in {haystack:,} generated messages",
                [_conversations(recall.everyday_sessions(haystack, seed=5))],
            )
        )
    sets += [
        ("people.yaml (speaker names)", [_people]),
        ("assistant.yaml", [_assistant]),
        ("friends.yaml", [_friends]),
    ]
    try:
        chats = list(public_sets.realtalk_split("dev")) + list(public_sets.realtalk_split("test"))
    except SystemExit as exc:  # not fetched: said in the report
        print(f"REALTALK skipped: {exc}", flush=True)
    else:
        sets.append(("REALTALK (10 chats)", [_realtalk_chat(*chat) for chat in chats]))
    return sets


def recall_parity(
    haystack: int, semantic: bool = False
) -> list[tuple[str, int, dict[str, float], dict[str, float]]]:
    """(set, questions, SQLite's recall, PostgreSQL's recall) for every set (*semantic*:
    with meaning on, every message embedded)."""
    results = []
    for name, parts in recall_sets(haystack):
        print(f"recall: {name}", flush=True)
        totals: list[dict[str, float]] = [{}, {}]
        count = 0
        for load in parts:
            (a, n), (b, _) = on_both(lambda t, load=load: recall_hits(t, load, semantic))
            count += n
            for into, hits in zip(totals, (a, b), strict=True):
                for key, value in hits.items():
                    into[key] = into.get(key, 0.0) + value
        shares = [{key: value / max(count, 1) for key, value in t.items()} for t in totals]
        results.append((name, count, shares[0], shares[1]))
    return results


def on_both(fn: Callable[[str], Any]) -> tuple[Any, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = fn(str(Path(tmp) / "state.db"))
    with pg_schema() as url:
        postgres = fn(url)
    return sqlite, postgres


BACKENDS = ("sqlite", "postgres")


@contextmanager
def search_store(backend: str, messages: int, keep: bool) -> Iterator[str]:
    """Where the search part's store of *backend* lives: kept, or made and removed."""
    if keep:
        STORES.mkdir(parents=True, exist_ok=True)
        yield kept(messages)[BACKENDS.index(backend)]
    elif backend == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield str(Path(tmp) / "state.db")
    else:
        with pg_schema() as url:
            yield url


def _at() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def search_part(messages: int, backends: list[str], args: Any, stored: dict[str, Any]) -> None:
    """Load (unless a kept store holds them) and search *messages* messages on *backends*."""
    sessions: list[dict[str, Any]] | None = None
    for backend in backends:
        with search_store(backend, messages, args.keep) as target:
            have = _stored_messages(target) if args.keep else 0
            if have != messages:
                if have:
                    drop_kept(messages, backend)
                print(f"load: {messages:,} messages into {backend}", flush=True)
                sessions = sessions or history(messages)
                run = {**fill(target, sessions), "at": _at()}
                stored.setdefault(f"load@{messages}", {})[backend] = run
            if not args.load_only:
                print(f"search: {messages:,} messages on {backend}", flush=True)
                found = latencies(target, args.rounds)
                entry = {"latency": found, "rounds": args.rounds, "at": _at()}
                entry["load"] = os.getloadavg()[0]
                stored.setdefault(f"latency@{messages}", {})[backend] = entry


RESULTS = HERE / "data" / "scaling.json"
"""Each part's last results (git-ignored), so that parts run at different times make one page."""
PARTS = ("writers", "import", "search", "recall")


def _measured(fn: Callable[[], Any]) -> dict[str, Any]:
    """*fn*'s result with the wall and CPU time it took and the load beside it."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return {
        "result": result,
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "load": os.getloadavg()[0],
        "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def _writers_lines(part: dict[str, Any]) -> list[str]:
    w_sqlite, w_pg = part["result"]["sqlite"], part["result"]["postgres"]
    args = part["args"]
    lines = [
        f"{args['writers']} writer processes, each appending {args['appends']} messages one "
        "transaction at a time to its own session (a gateway's workers), all connected "
        "before a common start signal. SQLite: one "
        "`state.db` in WAL mode; PostgreSQL 15 on the same machine (loopback, default "
        f"settings, a pool of up to 4 connections per process). Run {part['at']}, load "
        f"average {part['load']:.1f} at its end.",
        "",
        "| Backend | Stored / expected | Messages/s | p50 append | p99 append | "
        "Writers' CPU (client side) | Wall | Errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in (("SQLite", w_sqlite), ("PostgreSQL", w_pg)):
        errors = f"{len(row['errors'])}" + (f" (`{row['errors'][0]}`)" if row["errors"] else "")
        lines.append(
            f"| {name} | {row['stored']:,} / {row['expected']:,} | {row['rate']:,.0f} | "
            f"{row['p50']:.1f} ms | {row['p99']:.1f} ms | {row['cpu']:.1f} s | "
            f"{row['wall']:.1f} s | {errors} |"
        )
    ratio = w_pg["rate"] / w_sqlite["rate"] if w_sqlite["rate"] else float("nan")
    return [
        *lines,
        "",
        f"PostgreSQL's throughput is {ratio:.2f}x SQLite's here (one machine, 2 cores shared "
        "by writers and server alike; PostgreSQL's real gain is writers on other machines, "
        "which SQLite cannot have).",
    ]


def _search_lines(messages: int, load: dict[str, Any], latency: dict[str, Any]) -> list[str]:
    """The search part's paragraph and table for one size (a backend not measured at this
    size shows dashes)."""
    sqlite, postgres = latency.get("sqlite"), latency.get("postgres")
    filled, measured = [], []
    for name, key in (("SQLite", "sqlite"), ("PostgreSQL", "postgres")):
        run, searched = load.get(key), latency.get(key)
        if searched is not None:
            measured.append(f"{searched['at']} ({name}, load average {searched['load']:.1f})")
        if run is None:
            continue
        server = f", server {run['server_cpu']:.0f} s" if key == "postgres" else ""
        filled.append(
            f"{name} {run['wall']:.0f} s ({messages / run['wall']:,.0f} messages/s; CPU: "
            f"client {run['cpu']:.0f} s{server}; {run['at']}, load average {run['load']:.1f})"
        )
    rounds = (sqlite or postgres or {}).get("rounds", 0)
    lines = [
        f"Search over {messages:,} generated messages (everyday chat plus some Chinese "
        f"lines), `search_messages(limit=10)`, {rounds} rounds per query after one "
        "warm-up, on the loaded stores (each query class reuses them). CPU per query: the "
        "client process's (all of SQLite's work, the search's Python side on PostgreSQL) and, "
        "on PostgreSQL, the server backend's (read in `/proc`, in clock ticks of 10 ms). "
        f"Measured {' and '.join(measured)}."
        + (
            f" Loading (`import_sessions`, 500 sessions per call): {'; '.join(filled)}."
            if filled
            else ""
        ),
        "",
        "| Query class | SQLite median | SQLite p95 | SQLite CPU/query | PostgreSQL median | "
        "PostgreSQL p95 | PostgreSQL CPU/query (client + server) | PostgreSQL / SQLite "
        "(median) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label in QUERIES:
        a = sqlite["latency"][label] if sqlite else None
        b = postgres["latency"][label] if postgres else None
        left = f"{a[0]:.1f} ms | {a[1]:.1f} ms | {a[2]:.1f} ms" if a else "— | — | —"
        right = f"{b[0]:.1f} ms | {b[1]:.1f} ms | {b[2]:.1f} + {b[3]:.1f} ms" if b else "— | — | —"
        ratio = f"{b[0] / max(a[0], 1e-6):.1f}x" if a and b else "—"
        lines.append(f"| {label} | {left} | {right} | {ratio} |")
    return lines


def _import_lines(part: dict[str, Any]) -> list[str]:
    row = part["result"]
    return [
        f"Bulk import into `state.db`, {row['messages']:,} generated messages in batches of "
        "5,000 (`bench_sessions.build`): `import_sessions` against its floor, the same rows "
        "inserted by `executemany` (one statement per message, which is how `import_sessions` "
        "wrote before: FTS5 flushes its pending terms at every statement, one index segment "
        f"per message), interleaved. Run {part['at']}, load average {part['load']:.1f}.",
        "",
        "| | executemany (before) | `import_sessions` | ratio |",
        "|---|---|---|---|",
        f"| messages/s (wall) | {row['floor_rate']:,.0f} | {row['ours_rate']:,.0f} | "
        f"{row['ours_rate'] / row['floor_rate']:.2f}x |",
        f"| messages/s (CPU) | {row['floor_cpu_rate']:,.0f} | {row['ours_cpu_rate']:,.0f} | "
        f"{row['ours_cpu_rate'] / row['floor_cpu_rate']:.2f}x |",
    ]


def _recall_lines(part: dict[str, Any]) -> list[str]:
    lines = [
        "Recall of `search_messages` (without semantic search, which only SQLite offers) on "
        "every recall set of the benchmarks, each loaded the same way into a fresh store "
        f"of each backend. Run {part['at']}, load average {part['load']:.1f} at its end.",
        "",
        "| Set | Questions | Backend | session@1 | session@5 | message@1 | message@5 | "
        "message@10 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    worst = 0.0
    for name, count, a, b in part["result"]:
        for backend, scores in (("SQLite", a), ("PostgreSQL", b)):
            lines.append(
                f"| {name} | {count} | {backend} | {scores['session@1']:.2f} | "
                f"{scores['session@5']:.2f} | {scores['message@1']:.2f} | "
                f"{scores['message@5']:.2f} | {scores['message@10']:.2f} |"
            )
        worst = max(worst, max(a[key] - b[key] for key in a))
    return [
        *lines,
        "",
        f"Largest shortfall of PostgreSQL against SQLite on any of these figures: {worst:.3f} "
        f"({'within' if worst <= 0.02 else 'NOT within'} the 0.02 target).",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=",".join(PARTS))
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--appends", type=int, default=150)
    parser.add_argument("--messages", default="100000", help="sizes, e.g. 100000,1000000")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="sqlite,postgres")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--keep",
        action="store_true",
        help=f"keep the loaded stores ({STORES}, schemas "
        "bench_scaling_N) and reuse them when they hold the size asked for",
    )
    parser.add_argument("--load-only", action="store_true", help="load, measure no search")
    parser.add_argument("--drop", action="store_true", help="remove the kept stores and stop")
    parser.add_argument("--haystack", type=int, default=20_000)
    args = parser.parse_args()
    parts = [part for part in args.parts.split(",") if part]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
    sizes = [int(size) for size in args.messages.split(",") if size]
    backends = [name for name in args.backends.split(",") if name]
    if set(backends) - set(BACKENDS):
        parser.error(f"--backends: choose from {', '.join(BACKENDS)}")
    if args.drop:
        for messages in sizes:
            for backend in backends:
                drop_kept(messages, backend)
        return
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    stored: dict[str, Any] = {}

    if "writers" in parts:
        print(f"writers: {args.writers} x {args.appends}", flush=True)

        def both_writers() -> dict[str, Any]:
            a, b = on_both(lambda t: writers(t, args.writers, args.appends))
            return {"sqlite": a, "postgres": b}

        stored["writers"] = _measured(both_writers)
        stored["writers"]["args"] = {"writers": args.writers, "appends": args.appends}
    if "import" in parts:
        print(f"import: {sizes[0]:,} messages", flush=True)
        stored["import"] = _measured(lambda: import_speed(sizes[0]))
    if "search" in parts:
        for messages in sizes:
            search_part(messages, backends, args, stored)
    if "recall" in parts:
        stored["recall"] = _measured(lambda: recall_parity(args.haystack))
    # Re-read before writing: another run may have stored its parts (or backends) meanwhile.
    old = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for key, value in stored.items():
        nested = key.startswith(("load@", "latency@"))
        old[key] = {**old.get(key, {}), **value} if nested else value
    stored = {key: value for key, value in old.items() if not key.startswith("search@")}
    RESULTS.write_text(json.dumps(stored, indent=1))

    lines: list[str] = []
    if "writers" in stored:
        lines += [*_writers_lines(stored["writers"]), ""]
    if "import" in stored:
        lines += [*_import_lines(stored["import"]), ""]
    for key in sorted((k for k in stored if k.startswith("latency@")), key=lambda k: int(k[8:])):
        size = int(key[8:])
        lines += [*_search_lines(size, stored.get(f"load@{size}", {}), stored[key]), ""]
    if "recall" in stored:
        lines += [*_recall_lines(stored["recall"]), ""]
    write_section("scaling", "Scaling: SQLite against PostgreSQL", "\n".join(lines))


if __name__ == "__main__":
    main()
