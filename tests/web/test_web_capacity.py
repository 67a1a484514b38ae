"""``caledonia serve`` under load (issue #75): search bots off the event loop, a cap on bot
work (429 busy), each client's share of the bot slots and of the games, strict request
types, cut ids, header and body deadlines (docs/web.md, "Load and limits")."""
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
        self.app = app
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


def test_meta_answers_while_bot_steps_are_in_flight():
    """N steps whose bot decisions are under way (each blocked inside its agent's ``act``
    until released) hold N bot slots; GET /api/meta, on the same server's event loop, is
    answered meanwhile and counts them playing, before any step is answered. Ordering,
    not time: the 1 s bound under real search is the slow test below."""
    n = 3
    with Served(create_app(menu=AgentMenu(networks=False), bot_slots=n)) as srv:
        ids = [http(srv.url, "api/games", {"players": ["random"] * 2, "seed": i})[1]["id"]
               for i in range(n)]
        inside = [threading.Event() for _ in ids]
        release = threading.Event()
        for gid, entered in zip(ids, inside):
            session = srv.app.state.store.get(gid)
            for agent in session.agents.values():
                def held(game, act=agent.act, entered=entered):
                    entered.set()
                    assert release.wait(60), "the test did not release the bots"
                    return act(game)
                agent.act = held
        answers = []
        steps = [threading.Thread(target=lambda g=g: answers.append(
            http(srv.url, f"api/games/{g}/step", {"delta": 1})[0])) for g in ids]
        try:
            for t in steps:
                t.start()
            assert all(e.wait(60) for e in inside), "a step's bot never started its decision"
            status, meta = http(srv.url, "api/meta", timeout=30)
            assert status == 200 and meta["bot_slots"] == {"size": n, "playing": n}, meta
            assert answers == []                  # every step still waits for its bot
        finally:
            release.set()
            for t in steps:
                t.join(60)
    assert answers == [200] * n


def test_the_search_kernels_release_the_gil():
    """The compiled functions the search bots spend their time in (rollouts and the greedy
    evaluation: ``mcts``; the policy rollouts: ``nmcts``, ``nmctsg``) are ``nogil``, so the
    event loop answers while they run."""
    from caledonia_env.agents.netroll import policy_call
    from caledonia_env.agents.rollouts import greedy_call
    for kernel in (greedy_call, policy_call):
        assert kernel.targetoptions["nogil"] is True, kernel


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
    with pytest.raises(Busy, match="2 bot slot.*all playing") as e:
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


# ------------------------------------------------------------------ each client's share of the bots
class Clock:
    """A clock the test moves (BotSlots' ``clock``)."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_one_client_alone_may_use_every_bot_slot():
    slots = BotSlots(3, budget=10, clock=Clock())
    [slots.take("a") for _ in range(3)]
    with pytest.raises(Busy, match="all playing"):
        slots.take("a")


def test_a_client_holding_its_share_is_refused_and_another_gets_a_slot():
    clock = Clock()
    slots = BotSlots(2, budget=10, clock=clock)
    slots.give(slots.take("b"))               # b used the bots a moment ago
    clock.now += 5
    first = slots.take("a")
    clock.now += 3
    with pytest.raises(Busy, match="your requests already play bot moves in 1 of the "
                                   "server's 2 bot slot") as e:
        slots.take("a")
    assert e.value.status == 429
    assert e.value.retry_after == 7           # a's own request reaches its 10 s budget
    slots.take("b")
    assert slots.in_use() == 2
    slots.give(first)
    slots.take("a")                           # back to one each


def test_a_client_counts_as_using_the_bots_for_two_budgets():
    clock = Clock()
    slots = BotSlots(2, budget=10, clock=clock)
    slots.give(slots.take("b"))
    slots.take("a")
    clock.now += 20
    with pytest.raises(Busy, match="your share"):
        slots.take("a")                       # b gave its slot back 20 s ago: still kept
    clock.now += 0.5
    slots.take("a")                           # b's last use is over 20 s ago: a is alone
    assert slots.in_use() == 2


def test_with_no_budget_a_refused_client_is_remembered_two_seconds():
    clock = Clock()
    slots = BotSlots(2, budget=0, clock=clock)
    ticket = slots.take("a")
    slots.take("a")
    with pytest.raises(Busy, match="all playing") as e:
        slots.take("b")
    assert e.value.retry_after == 1
    slots.give(ticket)
    clock.now += 2
    with pytest.raises(Busy, match="your share"):
        slots.take("a")
    clock.now += 0.5
    slots.take("a")


def test_a_client_refused_when_all_are_taken_gets_the_next_free_slot():
    """The one who asked first while another held every slot: the freed slot is kept for
    it, the holder's next request is refused."""
    clock = Clock()
    slots = BotSlots(2, budget=10, clock=clock)
    tickets = [slots.take("a"), slots.take("a")]
    with pytest.raises(Busy, match="all playing"):
        slots.take("b")
    slots.give(tickets[0])
    with pytest.raises(Busy, match="your share"):
        slots.take("a")
    slots.take("b")


def test_clients_using_the_bots_share_the_slots_evenly():
    """Four slots, three clients using the bots, each asking for all four in turn: the
    first keeps free slots for the two holding fewer, so they end with 2, 1, 1 and none
    is idle."""
    slots = BotSlots(4, budget=10, clock=Clock())
    for c in "abc":
        slots.give(slots.take(c))
    got = {c: 0 for c in "abc"}
    for c in "abc":
        for _ in range(4):
            try:
                slots.take(c)
                got[c] += 1
            except Busy as e:
                assert "your share" in str(e) or "all playing" in str(e)
    assert got == {"a": 2, "b": 1, "c": 1} and slots.in_use() == 4


def test_through_the_app_a_client_holding_its_share_gets_a_429_and_another_plays():
    # a long budget: bob counts as using the bots for 2 × 600 s, however slow the test runs
    app = create_app(menu=AgentMenu(Limits(step_seconds=600), networks=False), bot_slots=2)
    alice, bob = client(app, "10.0.0.1"), client(app, "10.0.0.2")
    mine = new_game(alice, ["random", "random"]).json()["id"]
    theirs = new_game(bob, ["random", "random"]).json()["id"]
    assert bob.post(f"/api/games/{theirs}/step", json={"delta": 1}).status_code == 200
    slots = app.state.slots
    ticket = slots.take("10.0.0.1")          # another request of alice's is playing
    try:
        r = alice.post(f"/api/games/{mine}/step", json={"delta": 1})
        assert r.status_code == 429, r.text
        body = r.json()
        assert body["detail"].startswith("busy: your requests already play bot moves in 1 "
                                          "of the server's 2 bot slot(s)"), body
        assert int(r.headers["Retry-After"]) == body["retry_after"] >= 1
        assert alice.get(f"/api/games/{mine}").json()["length"] == 0     # unchanged
        assert alice.post(f"/api/games/{mine}/step", json={"delta": 0}).status_code == 200
        assert bob.post(f"/api/games/{theirs}/step", json={"delta": 1}).json()["length"] == 2
    finally:
        slots.give(ticket)
    assert alice.post(f"/api/games/{mine}/step", json={"delta": 1}).json()["length"] == 1
    assert slots.in_use() == 0


def test_through_the_app_a_client_alone_uses_every_slot():
    app = create_app(menu=AgentMenu(networks=False), bot_slots=2)
    alice = client(app, "10.0.0.1")
    gid = new_game(alice, ["random", "random"]).json()["id"]
    ticket = app.state.slots.take("10.0.0.1")
    try:
        assert alice.post(f"/api/games/{gid}/step", json={"delta": 1}).status_code == 200
    finally:
        app.state.slots.give(ticket)


# ------------------------------------------------------------------ each client's share of the games
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
