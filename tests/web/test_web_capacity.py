"""``caledonia serve`` under load (issue #75): search bots off the event loop, a cap on bot
work (429 busy), each client's share of the games, strict request types, cut ids, header
and body deadlines (docs/web.md, "Load and limits")."""
import asyncio
import importlib.util
import socket
import threading
import time

import pytest

if importlib.util.find_spec("fastapi") is None or \
        not (importlib.util.find_spec("httpx2") or importlib.util.find_spec("httpx")):
    pytest.skip("the web extra is not installed (pip install 'caledonia-env[web]')",
                allow_module_level=True)

from fastapi.testclient import TestClient  # noqa: E402

from caledonia_env.web import create_app  # noqa: E402
from caledonia_env.web.capacity import BotSlots, Busy  # noqa: E402
from caledonia_env.web.guards import BodyGuard, ShutdownGuard  # noqa: E402
from caledonia_env.web.seats import AgentMenu, Limits  # noqa: E402

LOCAL = "http://localhost"


def client(app, address="testclient"):
    return TestClient(app, base_url=LOCAL, client=(address, 50000))


def new_game(c, players, **kw):
    return c.post("/api/games", json={"players": players, **kw})


# ------------------------------------------------------------------ a real server in a thread
class Served:
    """uvicorn serving ``app`` on a free port of 127.0.0.1 in a thread (as `serve` does)."""

    def __init__(self, app, header_seconds=10.0):
        import uvicorn

        from caledonia_env.web.protocol import with_header_timeout
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                http=with_header_timeout(header_seconds), proxy_headers=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=60)


def http(url, path, body=None, timeout=300):
    import json
    import urllib.error
    import urllib.request
    req = urllib.request.Request(url + path, None if body is None else json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


@pytest.mark.slow
def test_meta_answers_within_a_second_while_search_steps_run():
    """The issue's B2 load: several mcts:512h5c64 steps at once; GET /api/meta answers
    within 1 s all along (the search kernels release the GIL, meta runs on the loop)."""
    n = 3
    menu = AgentMenu(Limits(step_seconds=1), networks=False)
    with Served(create_app(menu=menu, bot_slots=n)) as srv:
        ids = [http(srv.url, "api/games", {"players": ["mcts:512h5c64"] * 2, "seed": i})[1]["id"]
               for i in range(n)]
        answers = []
        steps = [threading.Thread(target=lambda g=g: answers.append(
            http(srv.url, f"api/games/{g}/step", {"delta": 10_000})[0])) for g in ids]
        for t in steps:
            t.start()
        time.sleep(0.5)
        waits = []
        while any(t.is_alive() for t in steps):
            t0 = time.monotonic()
            assert http(srv.url, "api/meta", timeout=30)[0] == 200
            waits.append(time.monotonic() - t0)
            time.sleep(0.1)
        for t in steps:
            t.join()
    assert answers == [200] * n
    assert len(waits) >= 3 and max(waits) < 1.0, waits


# ------------------------------------------------------------------ the cap on bot work
def test_past_the_bot_slots_a_step_is_a_429_busy_and_changes_nothing():
    app = create_app(menu=AgentMenu(networks=False), bot_slots=1)
    c = client(app)
    watch = new_game(c, ["random", "random"]).json()["id"]
    c.post(f"/api/games/{watch}/step", json={"delta": 3})
    play = new_game(c, ["human", "random"], seed=2).json()
    slots = app.state.slots
    ticket = slots.take()                    # another request's bots are playing
    try:
        r = c.post(f"/api/games/{watch}/step", json={"delta": 1})
        assert r.status_code == 429, r.text
        body = r.json()
        assert body["detail"].startswith("busy:") and "1 bot slot" in body["detail"]
        assert int(r.headers["Retry-After"]) == body["retry_after"] >= 1
        r = c.post(f"/api/games/{play['id']}/act", json={"action": play["legal"][0]["id"]})
        assert r.status_code == 429
        assert c.get(f"/api/games/{play['id']}").json()["length"] == play["length"]
        assert new_game(c, ["random", "human"], seed=3).status_code == 429   # bot first
        assert new_game(c, ["human", "random"], seed=3).status_code == 200   # human first
        # no bot move needed: answered as usual
        assert c.post(f"/api/games/{watch}/step", json={"delta": -1}).json()["position"] == 2
        assert new_game(c, ["random", "random"]).status_code == 200
        meta = c.get("/api/meta").json()
        assert meta["bot_slots"] == {"size": 1, "playing": 1}
    finally:
        slots.give(ticket)
    assert c.post(f"/api/games/{watch}/step", json={"delta": 2}).json()["position"] == 4
    assert slots.in_use() == 0


def test_a_game_busy_with_another_request_is_a_429_after_a_short_wait():
    app = create_app(menu=AgentMenu(networks=False))
    c = client(app)
    gid = new_game(c, ["random", "random"]).json()["id"]
    lock = app.state.store.get(gid).lock
    lock.acquire()
    try:
        t0 = time.monotonic()
        r = c.get(f"/api/games/{gid}")
        assert r.status_code == 429 and "answering another request" in r.json()["detail"]
        assert time.monotonic() - t0 < 10
        assert c.get(f"/api/games/{gid}/record").status_code == 429
    finally:
        lock.release()
    assert c.get(f"/api/games/{gid}").status_code == 200


def test_bot_slots_refuse_when_full_and_when_stopping():
    slots = BotSlots(2, budget=10)
    a, b = slots.take(), slots.take()
    with pytest.raises(Busy, match="2 bot slot") as e:
        slots.take()
    assert e.value.status == 429 and 1 <= e.value.retry_after <= 10
    slots.give(a)
    slots.give(b)
    slots.stopping.set()
    with pytest.raises(Busy, match="shutting down") as e:
        slots.take()
    assert e.value.status == 503
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="bot slots"):
            BotSlots(bad)


def test_stopping_ends_bot_play_at_the_next_decision():
    app = create_app(menu=AgentMenu(networks=False))
    c = client(app)
    gid = new_game(c, ["random", "random"]).json()["id"]
    s = app.state.store.get(gid)
    stop = app.state.slots.stopping
    act = s.agents[0].act

    def act_then_stop(game):               # the shutdown begins during the first decision
        stop.set()
        return act(game)
    s.agents[0].act = s.agents[1].act = act_then_stop
    v = c.post(f"/api/games/{gid}/step", json={"delta": 10_000}).json()
    assert v["length"] == 1 and "shutting down" in v["notice"]
    r = c.post(f"/api/games/{gid}/step", json={"delta": 1})
    assert r.status_code == 503 and "shutting down" in r.json()["detail"]


# ------------------------------------------------------------------ each client's share
def test_one_client_cannot_evict_every_other_clients_games():
    app = create_app(limit=6, menu=AgentMenu(networks=False))
    alice, mallory = client(app, "10.0.0.1"), client(app, "10.0.0.2")
    mine = [new_game(alice, ["random", "random"], seed=s).json()["id"] for s in range(3)]
    theirs = [new_game(mallory, ["random", "random"], seed=s).json()["id"] for s in range(20)]
    for gid in mine:                          # alice keeps her half
        assert alice.get(f"/api/games/{gid}").status_code == 200
    assert [mallory.get(f"/api/games/{g}").status_code for g in theirs[-3:]] == [200] * 3
    assert mallory.get(f"/api/games/{theirs[0]}").status_code == 404
    store = app.state.store
    assert store.held_by("10.0.0.1") == store.held_by("10.0.0.2") == 3
    # a third client takes its share from the one holding the most (or the oldest of a tie)
    new_game(client(app, "10.0.0.3"), ["random", "random"])
    assert len(store) == 6 and store.held_by("10.0.0.3") == 1


# ------------------------------------------------------------------ strict request types
@pytest.mark.parametrize("value", [True, "1", 1.0])
@pytest.mark.parametrize("path,field", [("games", "seed"), ("step", "delta"),
                                        ("goto", "position"), ("goto", "round"),
                                        ("act", "action")])
def test_ints_are_json_ints(value, path, field):
    c = client(create_app(menu=AgentMenu(networks=False)))
    players = ["human", "random"] if path == "act" else ["random", "random"]
    if path == "games":
        r = c.post("/api/games", json={"players": players, field: value})
    else:
        gid = new_game(c, players).json()["id"]
        r = c.post(f"/api/games/{gid}/{path}", json={field: value})
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert f"{field}: Input should be a valid integer" in detail, detail
    shown = "true" if value is True else '"1"' if value == "1" else "1.0"
    assert "got " + shown in detail, detail


def test_strings_are_json_strings():
    c = client(create_app(menu=AgentMenu(networks=False)))
    assert "valid string" in c.post("/api/games", json={"players": [1, 2]}).json()["detail"]
    assert "valid string" in c.post("/api/replays", json={"record": 5}).json()["detail"]


# ------------------------------------------------------------------ ids cut in echoes
def test_an_unknown_id_is_quoted_cut_short():
    c = client(create_app(menu=AgentMenu(networks=False)))
    r = c.get("/api/games/" + "x" * 60_000)     # (the test client's longest URL)
    assert r.status_code == 404
    detail = r.json()["detail"]
    assert "'" + "x" * 40 + "…'" in detail and len(detail) < 200, detail
    for bad in ("g1", "a" * 40):              # short ids are quoted whole
        assert repr(bad) in c.get(f"/api/games/{bad}").json()["detail"]
    r = c.post("/api/games/" + "y" * 5000 + "/step", json={"delta": 1})
    assert r.status_code == 404 and len(r.json()["detail"]) < 200
    r = c.post("/api/games", json={"players": ["random", "random"], "seed": "9" * 5000})
    assert r.status_code == 400 and len(r.json()["detail"]) < 200


# ------------------------------------------------------------------ deadlines
def run_asgi(app, receive, scope=None):
    sent = []

    async def send(message):
        sent.append(message)

    scope = scope or {"type": "http", "method": "POST", "path": "/", "headers": []}
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 30))
    return sent


def test_a_body_that_does_not_arrive_in_time_is_a_408_and_closes():
    async def app(scope, receive, send):     # never reached
        raise AssertionError("the app got a request whose body never came")

    async def half_a_body():
        if not half_a_body.sent:
            half_a_body.sent = True
            return {"type": "http.request", "body": b'{"players": ', "more_body": True}
        await asyncio.sleep(3600)
    half_a_body.sent = False
    t0 = time.monotonic()
    sent = run_asgi(BodyGuard(app, max_bytes=1000, body_seconds=0.3), half_a_body)
    assert time.monotonic() - t0 < 5
    assert sent[0]["status"] == 408 and (b"connection", b"close") in sent[0]["headers"]
    assert b"did not arrive within 0.3 s" in sent[1]["body"]


def test_a_request_cut_short_by_the_shutdown_is_a_503_not_a_traceback():
    async def app(scope, receive, send):
        raise asyncio.CancelledError("Task cancelled, timeout graceful shutdown exceeded")

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}
    sent = run_asgi(ShutdownGuard(app), receive)
    assert sent[0]["status"] == 503 and b"shutting down" in sent[1]["body"]


def test_half_sent_headers_are_closed_in_bounded_time():
    """A connection that sends part of its headers, or nothing, is closed after the header
    deadline; a whole request on another connection is answered meanwhile."""
    with Served(create_app(menu=AgentMenu(networks=False)), header_seconds=0.5) as srv:
        half, silent = (socket.create_connection(("127.0.0.1", srv.port), timeout=10)
                        for _ in range(2))
        t0 = time.monotonic()
        half.sendall(b"GET /api/meta HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        assert http(srv.url, "api/meta", timeout=10)[0] == 200
        assert half.recv(1024) == b"" and silent.recv(1024) == b""      # closed
        assert time.monotonic() - t0 < 5
        # a keep-alive connection: its second request's headers have the same deadline
        alive = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        alive.sendall(b"GET /api/meta HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert alive.recv(65536).startswith(b"HTTP/1.1 200")
        alive.sendall(b"GET /api/meta HTTP/1.1\r\nHo")
        t0 = time.monotonic()
        while alive.recv(65536):
            pass
        assert time.monotonic() - t0 < 5
        for s in (half, silent, alive):
            s.close()
