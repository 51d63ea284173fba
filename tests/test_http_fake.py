"""The loopback HTTP fake base: routes, request log, injected faults, clean stop and restart."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hermes_core.testing.http_fake import FakeHTTPServer, HTTPError, RecordedRequest, Reply


class NotesFake(FakeHTTPServer):
    """A tiny stateful service: notes by id, behind a bearer key and a "down" switch."""

    name = "fake-notes"

    def __init__(self, *, port: int = 0) -> None:
        super().__init__(port=port)
        self.notes: dict[str, str] = {}
        self.down = False
        self.route("PUT", r"/notes/(\w+)", self._put)
        self.route("GET", r"/notes/(\w+)", self._get)
        self.route("GET", r"/stream", self._stream)
        self.route("GET", r"/crash", self._crash)
        self.route("GET", r"/gone", lambda request: Reply(drop=True))

    def before_route(self, request: RecordedRequest) -> Reply | None:
        if self.down:
            return Reply(503, self.error_body(503, "down for maintenance"))
        if request.headers.get("authorization") != "Bearer k":
            return Reply(401, self.error_body(401, "bad key"))
        return None

    def error_body(self, status: int, message: str) -> Any:
        return {"detail": message}

    def _put(self, request: RecordedRequest, note_id: str) -> tuple[int, Any]:
        if not isinstance(request.body, dict) or "text" not in request.body:
            raise HTTPError(422, "body must be {'text': ...}")
        with self._lock:
            self.notes[note_id] = request.body["text"]
        return 201, None

    def _get(self, request: RecordedRequest, note_id: str) -> tuple[int, Any]:
        with self._lock:
            if note_id not in self.notes:
                raise HTTPError(404, f"note {note_id} not found")
            return 200, {"id": note_id, "text": self.notes[note_id]}

    def _stream(self, request: RecordedRequest) -> Reply:
        return Reply(content_type="text/plain", stream=(f"part{i};".encode() for i in range(3)))

    def _crash(self, request: RecordedRequest) -> Reply:
        raise KeyError("oops")


@pytest.fixture
def fake() -> Iterator[NotesFake]:
    with NotesFake() as server:
        yield server


@pytest.fixture
def client(fake: NotesFake) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.url, headers={"Authorization": "Bearer k"}, timeout=5) as c:
        yield c


def test_routes_answer_and_every_request_is_recorded(fake: NotesFake, client: httpx.Client) -> None:
    assert client.put("/notes/a1?x=1&x=2&flag=", json={"text": "hi"}).status_code == 201
    assert client.get("/notes/a1").json() == {"id": "a1", "text": "hi"}
    missing = client.get("/notes/zz")
    assert (missing.status_code, missing.json()) == (404, {"detail": "note zz not found"})
    assert client.get("/nowhere").json() == {"detail": "No route for GET /nowhere"}
    put = fake.requests[0]
    assert (put.method, put.path, put.query) == ("PUT", "/notes/a1", {"x": "2", "flag": ""})
    assert put.body == {"text": "hi"} and put.raw_body == b'{"text":"hi"}'
    assert put.headers["authorization"] == "Bearer k"
    assert [r.path for r in fake.calls("GET", r"/notes/\w+")] == ["/notes/a1", "/notes/zz"]
    assert fake.calls("GET", "/a1") == [fake.requests[1]]
    assert fake.calls("DELETE") == []
    fake.reset_log()
    assert fake.requests == []
    assert fake.notes == {"a1": "hi"}, "resetting the log keeps the state"


def test_bodies_that_are_not_json_are_recorded_as_text(
    fake: NotesFake, client: httpx.Client
) -> None:
    answer = client.put("/notes/b", content=b"plain words")
    assert answer.status_code == 422
    assert fake.requests[-1].body == "plain words"


def test_before_route_refuses_and_the_error_shape_is_the_fakes(
    fake: NotesFake, client: httpx.Client
) -> None:
    assert httpx.get(f"{fake.url}/notes/a").status_code == 401
    fake.down = True
    answer = client.get("/notes/a")
    assert (answer.status_code, answer.json()) == (503, {"detail": "down for maintenance"})
    assert len(fake.requests) == 2, "refused requests are recorded too"


def test_injected_status_applies_the_given_number_of_times(
    fake: NotesFake, client: httpx.Client
) -> None:
    fake.notes["a"] = "x"
    fake.fail(r"^GET /notes/", times=2, status=502)
    assert [client.get("/notes/a").status_code for _ in range(3)] == [502, 502, 200]
    assert client.get("/notes/a").status_code == 200
    fake.fail(times=None, status=500)
    assert [client.get("/notes/a").status_code for _ in range(3)] == [500] * 3
    assert client.get("/notes/a").json() == {"detail": "injected fault"}
    fake.clear_faults()
    assert client.get("/notes/a").status_code == 200


def test_injected_malformed_body_and_delay(fake: NotesFake, client: httpx.Client) -> None:
    fake.notes["a"] = "x"
    fake.fail("/notes/a", status=200, raw_body=b'{"id": "a", "te')
    answer = client.get("/notes/a")
    assert (answer.status_code, answer.content) == (200, b'{"id": "a", "te')
    fake.fail("/notes/a", status=None, delay=0.5)
    with pytest.raises(httpx.ReadTimeout):
        client.get("/notes/a", timeout=0.1)
    assert client.get("/notes/a").json()["text"] == "x", "after a delay-only fault: normal"


def test_dropped_connections_injected_or_replied(fake: NotesFake, client: httpx.Client) -> None:
    fake.fail("/notes/", status=None, drop=True)
    with pytest.raises(httpx.RemoteProtocolError):
        client.get("/notes/a")
    with pytest.raises(httpx.RemoteProtocolError):
        client.get("/gone")
    assert client.get("/notes/a").status_code == 404, "the next request is answered"


def test_a_crashing_handler_answers_500_naming_the_error(
    fake: NotesFake, client: httpx.Client
) -> None:
    answer = client.get("/crash")
    assert answer.status_code == 500
    assert "fake-notes crashed: KeyError('oops')" in answer.json()["detail"]


def test_streamed_replies_arrive_whole(fake: NotesFake, client: httpx.Client) -> None:
    with client.stream("GET", "/stream") as answer:
        assert answer.headers["content-type"] == "text/plain"
        assert b"".join(answer.iter_bytes()) == b"part0;part1;part2;"


def test_clients_hanging_up_make_no_noise(
    fake: NotesFake, client: httpx.Client, capfd: pytest.CaptureFixture[str]
) -> None:
    fake.fail("/notes/", status=None, delay=0.3, times=3)
    for _ in range(3):
        with pytest.raises(httpx.ReadTimeout):
            client.get("/notes/a", timeout=0.05)
    deadline = time.monotonic() + 10
    while fake._connections and time.monotonic() < deadline:  # the handlers answer a void
        time.sleep(0.02)
    assert not fake._connections
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


def test_stop_refuses_connections_and_start_rebinds_the_same_port() -> None:
    fake = NotesFake().start()
    port = fake.port
    with httpx.Client(base_url=fake.url, headers={"Authorization": "Bearer k"}) as client:
        assert client.put("/notes/a", json={"text": "kept"}).status_code == 201
        done = threading.Event()
        threading.Thread(target=lambda: (fake.stop(), done.set()), daemon=True).start()
        assert done.wait(5), "stop() returns promptly even with a keep-alive connection open"
        with pytest.raises(httpx.TransportError):
            client.get("/notes/a", timeout=2)
        fake.start()
        try:
            assert fake.port == port
            assert client.get("/notes/a").json()["text"] == "kept"
        finally:
            fake.stop()
    fake.stop()  # twice is fine
