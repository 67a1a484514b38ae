"""API of ``caledonia serve`` (caledonia_env.web) through FastAPI's TestClient.

Every position the API shows is checked against the engine: the game rebuilt from its
config and the logged actions must give the same ``to_scenario()`` and legal actions.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import urllib.request

import pytest

if importlib.util.find_spec("fastapi") is None or \
        not (importlib.util.find_spec("httpx2") or importlib.util.find_spec("httpx")):
    pytest.skip("the web extra is not installed (pip install 'caledonia-env[web]': "
                "fastapi, uvicorn, httpx2)", allow_module_level=True)

from fastapi.testclient import TestClient  # noqa: E402

from caledonia_env import Game, GameConfig  # noqa: E402
from caledonia_env import tournament as tn  # noqa: E402
from caledonia_env.agents import make  # noqa: E402
from caledonia_env.engine.compile.first_run import ESTIMATE_S  # noqa: E402
from caledonia_env.web import app as web_app  # noqa: E402
from caledonia_env.web import create_app  # noqa: E402
from caledonia_env.web.cli import add_serve_parser, cmd_serve  # noqa: E402
from caledonia_env.web.view import board_json  # noqa: E402


def local(app):
    """A test client whose requests carry ``Host: localhost`` (the app answers only its
    allowed host names, docs/web.md Security)."""
    return TestClient(app, base_url="http://localhost")


@pytest.fixture
def client():
    return local(create_app(limit=8))


def engine_at(view, config):
    """The engine's game after the view's logged actions up to its position."""
    g = Game(config)
    g.apply_sequence([e["action"] for e in view["log"][:view["position"]]])
    return g


def assert_matches(view, config):
    g = engine_at(view, config)
    assert view["scenario"] == json.loads(json.dumps(g.to_scenario()))
    assert [a["id"] for a in view["legal"]] == [int(a) for a in g.legal_actions()]
    assert [a["name"] for a in view["legal"]] == [g.describe_action(a) for a in g.legal_actions()]
    assert view["current_player"] == g.current_player and view["round"] == g.round
    return g


def finished_record(seed=5, players=2):
    g = Game(num_players=players, seed=seed)
    agents = [make("random", seed=p) for p in range(players)]
    while not g.is_terminal:
        g.step(agents[g.current_player].act(g))
    return g


def test_watch_step_forward_back_and_jump_to_round(client):
    r = client.post("/api/games", json={"players": ["greedy", "random"], "seed": 3})
    assert r.status_code == 200
    v = r.json()
    gid, cfg = v["id"], GameConfig(num_players=2, seed=3)
    assert v["mode"] == "watch" and v["position"] == 0 and v["length"] == 0
    assert_matches(v, cfg)
    for _ in range(3):
        v = client.post(f"/api/games/{gid}/step", json={"delta": 1}).json()
    assert v["position"] == 3 and v["length"] == 3
    g = assert_matches(v, cfg)
    assert v["last"]["name"] == v["log"][2]["name"] and v["last"]["player"] == v["log"][2]["player"]
    assert g.history == [e["action"] for e in v["log"]]
    v = client.post(f"/api/games/{gid}/step", json={"delta": -2}).json()
    assert v["position"] == 1 and v["length"] == 3
    assert_matches(v, cfg)
    v = client.post(f"/api/games/{gid}/goto", json={"round": 3}).json()
    assert v["round"] == 3 and v["log"][v["position"] - 1]["round"] == 2
    assert_matches(v, cfg)
    board = client.get(f"/api/games/{gid}/board").json()
    assert len(board["hexes"]) == g.board.n_hex and len(board["ports"]) == 4
    assert board["map"] == list(g.map)


def test_step_stops_at_the_ends_with_a_clear_error(client):
    gid = client.post("/api/games", json={"players": ["random", "random"]}).json()["id"]
    r = client.post(f"/api/games/{gid}/step", json={"delta": -1})
    assert r.status_code == 400 and "first position" in r.json()["detail"]
    v = client.post(f"/api/games/{gid}/step", json={"delta": 10_000}).json()
    assert v["terminal"] and v["position"] == v["length"] > 0
    assert_matches(v, GameConfig(num_players=2, seed=0))
    r = client.post(f"/api/games/{gid}/step", json={"delta": 1})
    assert r.status_code == 400 and "game is over" in r.json()["detail"]


def test_play_illegal_action_then_legal_action_bots_reply_and_undo(client):
    cfg = GameConfig(num_players=3, seed=11)
    v = client.post("/api/games", json={"players": ["greedy", "human", "random"], "seed": 11}).json()
    gid = v["id"]
    assert v["mode"] == "play" and v["human_turn"] and v["current_player"] == 1
    assert_matches(v, cfg)              # the bots before seat 1 already played
    legal = {a["id"] for a in v["legal"]}
    illegal = next(a for a in range(2000) if a not in legal)
    r = client.post(f"/api/games/{gid}/act", json={"action": illegal})
    assert r.status_code == 400 and "illegal action" in r.json()["detail"]
    same = client.get(f"/api/games/{gid}").json()
    assert same["scenario"] == v["scenario"] and same["length"] == v["length"]
    before = v
    # play human decisions until one with a placement on the map (by node)
    for _ in range(40):
        v = client.post(f"/api/games/{gid}/act", json={"action": v["legal"][0]["id"]}).json()
        assert v["human_turn"] or v["terminal"]
        assert_matches(v, cfg)
        if any(a["node"] is not None for a in v["legal"]):
            break
    placement = next(a for a in v["legal"] if a["node"] is not None)
    g = engine_at(v, cfg)
    assert g.board.labels[placement["node"]] in placement["name"]
    prev = v
    v = client.post(f"/api/games/{gid}/act", json={"action": placement["id"]}).json()
    human_moves = [e for e in v["log"] if e["player"] == 1]
    assert human_moves[-1]["action"] == placement["id"]
    v = client.post(f"/api/games/{gid}/undo").json()
    assert v["scenario"] == prev["scenario"] and v["legal"] == prev["legal"]
    while v["length"] > before["length"]:
        v = client.post(f"/api/games/{gid}/undo").json()
    assert v["scenario"] == before["scenario"]
    r = client.post(f"/api/games/{gid}/undo")
    assert r.status_code == 400 and "nothing to undo" in r.json()["detail"]


def test_act_refused_on_a_past_position_and_in_watch_mode(client):
    v = client.post("/api/games", json={"players": ["human", "random"], "seed": 2}).json()
    gid = v["id"]
    v = client.post(f"/api/games/{gid}/act", json={"action": v["legal"][0]["id"]}).json()
    client.post(f"/api/games/{gid}/goto", json={"position": 0})
    r = client.post(f"/api/games/{gid}/act", json={"action": v["legal"][0]["id"]})
    assert r.status_code == 400 and "latest position" in r.json()["detail"]
    w = client.post("/api/games", json={"players": ["random", "random"]}).json()
    r = client.post(f"/api/games/{w['id']}/act", json={"action": w["legal"][0]["id"]})
    assert r.status_code == 400 and "not a human" in r.json()["detail"]


def test_replay_upload_steps_through_the_record_to_the_final_score(client):
    g = finished_record()
    r = client.post("/api/replays", json={"record": g.to_json(), "name": "game.json"})
    assert r.status_code == 200
    v = r.json()
    assert v["mode"] == "replay" and v["position"] == 0 and v["length"] == len(g.history)
    assert [e["action"] for e in v["log"]] == g.history
    v = client.post(f"/api/games/{v['id']}/goto", json={"position": v["length"]}).json()
    assert v["terminal"] and v["score"]["winners"] == g.winners()
    assert [b["total"] for b in v["score"]["breakdown"]] == [int(x) for x in g.scores()]
    assert v["scenario"] == json.loads(json.dumps(g.to_scenario()))
    r = client.post(f"/api/games/{v['id']}/step", json={"delta": 1})
    assert r.status_code == 400 and "over" in r.json()["detail"]
    rec = client.get(f"/api/games/{v['id']}/record")
    assert Game.from_json(rec.text).history == g.history


def test_replay_of_a_record_that_starts_from_a_scenario(client):
    g = Game.from_scenario({"num_players": 2, "map": "A1,B1,C1,D1", "round": 2,
                            "players": [{"money": 30}, {"money": 25}]})
    agents = [make("random", seed=p) for p in range(2)]
    for _ in range(6):
        g.step(agents[g.current_player].act(g))
    v = client.post("/api/replays", json={"record": g.to_json()}).json()
    assert v["scenario"]["round"] == 2 and [p["money"] for p in v["scenario"]["players"]] == [30, 25]
    v = client.post(f"/api/games/{v['id']}/goto", json={"position": 6}).json()
    assert v["scenario"] == json.loads(json.dumps(g.to_scenario()))


def test_replay_of_a_partial_record_cannot_be_continued(client):
    g = Game(num_players=2, seed=4)
    g.apply_sequence([g.legal_actions()[0] for _ in range(1)])
    v = client.post("/api/replays", json={"record": g.to_json()}).json()
    client.post(f"/api/games/{v['id']}/goto", json={"position": 1})
    r = client.post(f"/api/games/{v['id']}/step", json={"delta": 1})
    assert r.status_code == 400 and "end of the record" in r.json()["detail"]


def _tampered():
    g = finished_record(seed=6)
    good = json.loads(g.to_json())
    bad_action = dict(good, actions=good["actions"][:5] + [0] + good["actions"][5:])
    bad_map = dict(good, map=["A2", "B2", "C2", "D2"] if good["map"] != ["A2", "B2", "C2", "D2"]
                   else ["A1", "B1", "C1", "D1"])
    return {
        "not json": "{this is not json",
        "empty": "   ",
        "a list": "[1, 2, 3]",
        "no actions": json.dumps({"version": 1, "config": good["config"]}),
        "illegal action": json.dumps(bad_action),
        "action id out of range": json.dumps(dict(good, actions=[10**9])),
        "action not a number": json.dumps(dict(good, actions=["x"])),
        "wrong map": json.dumps(bad_map),
        "bad version": json.dumps(dict(good, version=999)),
        "bad config": json.dumps(dict(good, config={"num_players": 9})),
        "config not a dict": json.dumps(dict(good, config=[1, 2])),
        "bad scenario": json.dumps({"version": 1, "scenario": {"players": "x"}, "actions": [],
                                    "map": good["map"]}),
    }


@pytest.mark.parametrize("case", sorted(_tampered()))
def test_malformed_or_tampered_record_gives_a_clear_400(client, case):
    r = client.post("/api/replays", json={"record": _tampered()[case]})
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert isinstance(detail, str) and detail and "Traceback" not in detail


@pytest.mark.parametrize("body, words", [
    ({"players": ["nobody", "random"]}, "not offered"),
    ({"players": []}, "players"),
    ({"players": ["random"] * 5}, "players"),
    ({"players": "random"}, "players"),
    ({"players": ["random", "random"], "map": "Z9"}, "map"),
    ({"players": ["random", "random"], "seed": -1}, "seed"),
    ({"players": ["random", "random"], "clans": "nonsense"}, "clan"),
    ({"players": ["random", "random"], "clans": ["stewart"]}, "clans"),
    ({}, "players"),
])
def test_malformed_new_game_gives_a_clear_400(client, body, words):
    r = client.post("/api/games", json=body)
    assert r.status_code == 400, r.text
    assert words in r.json()["detail"]


def test_malformed_requests_and_unknown_game(client):
    assert client.get("/api/games/nope").status_code == 404
    gid = client.post("/api/games", json={"players": ["random", "random"]}).json()["id"]
    for path, body in [("step", {"delta": "x"}), ("goto", {}), ("goto", {"position": 99}),
                       ("goto", {"position": 0, "round": 1}), ("act", {"action": "pass"}),
                       ("act", {})]:
        r = client.post(f"/api/games/{gid}/{path}", json=body)
        assert r.status_code == 400 and isinstance(r.json()["detail"], str), (path, body, r.text)
    r = client.post(f"/api/games/{gid}/step", content=b"not json",
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 400


def test_games_are_independent_and_the_oldest_is_evicted():
    c = local(create_app(limit=2))
    ids = [c.post("/api/games", json={"players": ["random", "random"], "seed": s}).json()["id"]
           for s in range(3)]
    assert len(set(ids)) == 3
    assert c.get(f"/api/games/{ids[0]}").status_code == 404
    c.post(f"/api/games/{ids[1]}/step", json={"delta": 2})
    assert c.get(f"/api/games/{ids[1]}").json()["position"] == 2
    assert c.get(f"/api/games/{ids[2]}").json()["position"] == 0
    assert c.delete(f"/api/games/{ids[2]}").status_code == 200
    assert c.get(f"/api/games/{ids[2]}").status_code == 404


def test_page_and_static_files_are_served(client):
    r = client.get("/")
    assert r.status_code == 200 and '<svg id="map"' in r.text
    for f in ("app.js", "style.css"):
        assert client.get(f"/static/{f}").status_code == 200
    js = client.get("/static/app.js").text.replace('"http://www.w3.org/2000/svg"', "")
    assert "http://" not in js and "https://" not in js     # no network fetches
    meta = client.get("/api/meta").json()
    assert "greedy" in [a["name"] for a in meta["agents"]] and "stewart" in meta["clans"]


@pytest.mark.parametrize("cached", [True, False])
def test_meta_says_whether_the_first_game_compiles_the_engine(client, monkeypatch, cached):
    """The page reads it to announce the first run's compile (engine.compile.first_run)."""
    monkeypatch.setattr(web_app, "engine_cached", lambda: cached)
    engine = client.get("/api/meta").json()["engine"]
    assert engine == {"compiled": cached, "estimate_s": ESTIMATE_S}


def test_ppo_pretrained_seat_plays():
    pytest.importorskip("torch", reason="ppo:pretrained needs the train extra (torch)")
    c = local(create_app())
    v = c.post("/api/games", json={"players": ["ppo:pretrained", "random"], "seed": 1}).json()
    v = c.post(f"/api/games/{v['id']}/goto", json={"round": 2}).json()
    assert v["round"] == 2 and {e["player"] for e in v["log"]} == {0, 1}
    assert_matches(v, GameConfig(num_players=2, seed=1))


def a_report(folder, title="Clan balance <4p>", conclusion="Stewart wins 31.2% & more."):
    """A report folder as ``caledonia balance --report`` writes it, without playing."""
    return tn.write_report(tn.StudySummary(
        title=title, command="caledonia balance --report x", metadata={"agent": "greedy"},
        tables=[("win rate by clan", ["clan", "win %"], [["Stewart", 31.2]])],
        conclusions=[conclusion, "Buchanan is below par."]), str(folder))


def test_reports_are_listed_and_shown(tmp_path):
    reports = tmp_path / "reports"
    a_report(reports / "balance_4p")
    a_report(reports / "b_2p", title="Two players")
    (reports / "not_a_report").mkdir()                  # no index.html: not listed
    (reports / "loose.txt").write_text("x")
    c = local(create_app(limit=2, reports=reports))
    listing = c.get("/api/reports").json()["reports"]
    assert [(r["name"], r["title"]) for r in listing] == [("b_2p", "Two players"),
                                                          ("balance_4p", "Clan balance <4p>")]
    assert listing[1]["conclusion"] == "Stewart wins 31.2% & more." and listing[1]["written"]
    page = c.get("/reports")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<a href="/reports/balance_4p/">Clan balance &lt;4p&gt;</a>' in page.text
    assert "Stewart wins 31.2% &amp; more." in page.text and "<script" not in page.text
    r = c.get("/reports/balance_4p/")
    assert r.status_code == 200 and "<li>Stewart wins 31.2% &amp; more.</li>" in r.text
    assert "script-src" not in r.headers["content-security-policy"]     # no script runs
    assert r.headers["content-security-policy"].startswith("default-src 'none'")
    assert c.get("/reports/balance_4p/report.json").json()["title"] == "Clan balance <4p>"
    assert c.get("/reports/balance_4p/report.md").text.startswith("# Clan balance <4p>")
    moved = c.get("/reports/balance_4p", follow_redirects=False)
    assert moved.status_code in (302, 307) and moved.headers["location"] == "/reports/balance_4p/"
    assert "/reports" in c.get("/").text                # the page links to them
    empty = local(create_app(limit=2, reports=tmp_path / "missing"))
    assert empty.get("/api/reports").json() == {"reports": []}
    assert "No reports" in empty.get("/reports").text


def test_serve_parser_and_bad_options():
    parser = argparse.ArgumentParser()
    add_serve_parser(parser.add_subparsers(dest="cmd"))
    args = parser.parse_args(["serve"])
    assert (args.host, args.port, args.games) == ("127.0.0.1", 8000, 32)
    assert args.func is cmd_serve
    assert cmd_serve(parser.parse_args(["serve", "--port", "70000"])) == 2
    assert cmd_serve(parser.parse_args(["serve", "--games", "0"])) == 2
    assert (args.agent_dir, args.allowed_host, args.ruleset) == (None, [], [])
    assert args.reports == "reports"
    assert (args.max_rollouts, args.max_sims, args.max_seconds, args.step_seconds) == \
        (512, 256, 5.0, 10.0)


def test_serve_parser_loads_without_the_web_extra():
    code = ("import sys; import caledonia_env.web.cli; "
            "assert 'fastapi' not in sys.modules and 'uvicorn' not in sys.modules")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def test_serve_prints_its_url_and_answers():
    pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
    code = ("import argparse,sys; from caledonia_env.web.cli import add_serve_parser; "
            "p=argparse.ArgumentParser(); add_serve_parser(p.add_subparsers()); "
            "a=p.parse_args(['serve','--port','0']); sys.exit(a.func(a))")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("caledonia serve: open http://127.0.0.1:"), line
        url = line.split()[3]
        with urllib.request.urlopen(url + "api/meta", timeout=30) as r:
            assert json.load(r)["limit"] == 32
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_board_names_port_tiles_by_their_printed_numbers():
    """R-5: the legend of port tiles is keyed and ordered by the numbers printed on them."""
    tiles = board_json(Game(num_players=2, seed=1))["port_tiles"]
    assert list(tiles) == [f"P{i}" for i in range(1, 10)]
    assert tiles["P5"].startswith("money (money 10)")
    assert tiles["P6"].startswith("price shift") and tiles["P7"].startswith("swap units")
