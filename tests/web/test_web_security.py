"""``caledonia serve`` against a hostile client (docs/web.md, Security): no request reads the
server's files, reaches it through another Host name, or takes it down; bad input is a 4xx.
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

if importlib.util.find_spec("fastapi") is None or \
        not (importlib.util.find_spec("httpx2") or importlib.util.find_spec("httpx")):
    pytest.skip("the web extra is not installed (pip install 'caledonia-env[web]')",
                allow_module_level=True)

from fastapi.testclient import TestClient  # noqa: E402

from caledonia_env import Game, GameConfig  # noqa: E402
from caledonia_env.agents import make  # noqa: E402
from caledonia_env.agents.checkpoint import PRETRAINED_DIR  # noqa: E402
from caledonia_env.web import create_app  # noqa: E402
from caledonia_env.web.app import MAX_BODY_BYTES  # noqa: E402
from caledonia_env.web.cli import add_serve_parser, cmd_serve  # noqa: E402
from caledonia_env.web.guards import allowed_hosts, json_depth  # noqa: E402
from caledonia_env.web.seats import AgentMenu, Limits, scan_agent_dir  # noqa: E402

LOCAL = "http://localhost"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(limit=8), base_url=LOCAL)


def new_game(c, players, **kw):
    return c.post("/api/games", json={"players": players, **kw})


def detail(r, status=400):
    assert r.status_code == status, r.text
    return r.json()["detail"]


def a_record(seed=5, players=2, **config):
    g = Game(GameConfig(num_players=players, seed=seed, **config))
    agents = [make("random", seed=p) for p in range(players)]
    for _ in range(12):
        g.step(agents[g.current_player].act(g))
    return json.loads(g.to_json())


# ------------------------------------------------------------------ seats never name a path
@pytest.fixture
def probe_dir(tmp_path):
    d = tmp_path / "probe"
    d.mkdir()
    (d / "secret_model.zip").write_bytes(b"PK not really a zip")
    (d / "notes.txt").write_text("top secret content")
    return d


def test_a_seat_cannot_probe_server_paths(client, probe_dir):
    """Existing file, non-zip file, folder, missing file, /dev/zero: one answer, naming only
    the allowed checkpoints; no folder listing, no file content, nothing read."""
    targets = [probe_dir / "secret_model.zip", probe_dir / "notes.txt", probe_dir,
               probe_dir / "missing.zip", "/dev/zero",
               os.path.join(PRETRAINED_DIR, "ppo_2p.zip"), "../agents/pretrained/ppo_2p.zip"]
    for kind in ("ppo:{}", "puct:4:{}", "puctr:4:{}", "nmcts:4:{}", "nmctsg:4:{}"):
        answers = set()
        for t in targets:
            text = re.sub(r"'[^']*'", "NAME", detail(new_game(client, [kind.format(t),
                                                                       "random"])))
            assert "secret_model" not in text and "notes" not in text
            answers.add(text)
        assert len(answers) == 1, answers
        (text,) = answers
        assert "unknown checkpoint" in text and "offers: pretrained" in text, text
        for word in ("exist", "not a zip", "folder", "directory", "top secret"):
            assert word not in text


def test_agent_dir_offers_its_checkpoints_by_file_name_only(tmp_path):
    pytest.importorskip("torch", reason="checkpoint agents need the train extra (torch)")
    d = tmp_path / "models"
    (d / "sub").mkdir(parents=True)
    shutil.copy(os.path.join(PRETRAINED_DIR, "ppo_2p.zip"), d / "mine.zip")
    (d / "broken.zip").write_text('{"secret": "do not show"}')
    (d / "sub" / "deep.zip").write_bytes(b"")
    (d / "readme.txt").write_text("x")
    found = scan_agent_dir(d)
    assert sorted(found) == ["broken.zip", "mine.zip"]
    c = TestClient(create_app(menu=AgentMenu(checkpoints=found)), base_url=LOCAL)
    meta = c.get("/api/meta").json()
    assert meta["checkpoints"] == ["pretrained", "broken.zip", "mine.zip"]
    v = new_game(c, ["ppo:mine.zip", "random"], seed=1).json()
    v = c.post(f"/api/games/{v['id']}/step", json={"delta": 4}).json()
    assert v["seats"][0] == "ppo:mine.zip" and v["length"] == 4
    text = detail(new_game(c, ["puct:4:broken.zip", "random"]))
    assert "could not be loaded" in text and "secret" not in text and str(d) not in text
    for name in ("ppo:sub/deep.zip", f"ppo:{d}/mine.zip", "ppo:readme.txt"):
        assert "unknown checkpoint" in detail(new_game(c, [name, "random"]))


def test_the_menus_pretrained_is_the_policy_for_ppo_and_the_searches_network_for_searches():
    pytest.importorskip("torch", reason="checkpoint agents need the train extra (torch)")
    from caledonia_env.agents.checkpoint import pretrained_path
    menu = AgentMenu()
    for n in (2, 3):
        assert menu.make("ppo:pretrained", n).path == pretrained_path(n)
        for name in ("nmctsg:4", "puct:4", "nmcts:4:pretrained"):
            assert menu.make(name, n).path == pretrained_path(n, search=True), name


def test_network_agents_are_not_offered_without_networks():
    c = TestClient(create_app(menu=AgentMenu(networks=False)), base_url=LOCAL)
    assert [a["name"] for a in c.get("/api/meta").json()["agents"]] == \
        ["random", "greedy", "mcts", "automa"]
    assert "not offered by this server" in detail(new_game(c, ["ppo:pretrained", "random"]))


def test_scan_agent_dir_needs_a_folder(tmp_path):
    with pytest.raises(ValueError, match="must be a folder"):
        scan_agent_dir(tmp_path / "nope")


# ------------------------------------------------------------------ bounded bots
@pytest.mark.parametrize("name, words", [
    ("mcts:99999999", "1..512"), ("mcts:0", "1..512"), ("mcts:inf", "1..512"),
    ("mcts:-3", "1..512"), ("mcts:1e9", "1..512"), ("mcts:nans", "seconds"),
    ("mcts:infs", "seconds"), ("mcts:6s", "<= 5"), ("mcts:0s", "seconds"),
    ("puct:100000", "1..256"), ("puctr:0", "1..256"), ("nmcts:513", "1..512"),
    ("nmctsg:x", "1..512"), ("automa:9", "level 1-5"), ("automa", "level 1-5"),
    ("automa:5x", "level 1-5"), ("greedy:3", "no parameter"), ("random:/etc", "no parameter"),
    ("ppo", "unknown checkpoint"), ("nobody", "not offered"), ("mcts_x", "not offered"),
    ("greedy:/etc/w.json", "not a file"), ("mcts:8:w.json", "not a file"),
    ("nmctsg:8h2:w.json", "not a file"), ("mcts:8h9", "rounds (1..5)"),
    ("mcts:8h0", "rounds (1..5)"), ("mcts:8c999", "candidates (2..64)"),
    ("nmctsg:8c1", "candidates (2..64)"), ("mcts:999h2", "1..512"),
    ("random:solo", "no parameter"), ("mcts:6sh2", "<= 5"),
    ("nmctsg:8:solo:solo", "unknown checkpoint"),
    ("greedy:", "no parameter"), ("mcts::solo", "1..512"), ("mcts:", "1..512"),
])
def test_agent_parameters_are_bounded(client, name, words):
    if name.split(":")[0] in ("puct", "puctr", "nmcts", "nmctsg", "ppo") and \
            importlib.util.find_spec("torch") is None:
        words = "not offered"
    assert words in detail(new_game(client, [name, "random"]))


def test_bounds_follow_the_limits():
    menu = AgentMenu(Limits(max_rollouts=8, max_sims=4, max_seconds=0.5), networks=False)
    assert menu.check(" mcts:8 ") == "mcts:8" and menu.check("mcts:0.5s") == "mcts:0.5s"
    for bad in ("mcts:9", "mcts:0.6s"):
        with pytest.raises(ValueError, match="on this server"):
            menu.check(bad)
    with pytest.raises(ValueError, match="max_rollouts"):
        Limits(max_rollouts=0)
    with pytest.raises(ValueError, match="step_seconds"):
        Limits(step_seconds=float("inf"))


def test_the_menu_offers_the_search_suffixes_and_the_shipped_weights():
    """The strongest bots of docs/agents.md by name: ``greedy:solo``, ``mcts:N[hH][cK][:solo]``,
    ``nmctsg:N[hH][cK][:CHECKPOINT][:solo]``; the weights are a shipped set's name only."""
    from caledonia_env.agents.weights import load_weights
    solo = load_weights("solo")
    menu = AgentMenu(Limits(max_rollouts=64))
    for name in ("greedy:solo", "mcts:64h2c12:solo", "mcts:0.5s:solo", "mcts:8c12"):
        assert menu.check(name) == name
    np.testing.assert_array_equal(menu.make("greedy:solo", 1).weights, solo)
    bot = menu.make("mcts:16h2c12:solo", 2)
    assert (bot.rollouts, bot.candidates, bot.evaluator.horizon) == (16, 12, 2)
    np.testing.assert_array_equal(bot.evaluator.weights, solo)
    if importlib.util.find_spec("torch") is None:
        return
    for name, weights in (("nmctsg:64h2:solo", solo), ("nmctsg:8h1:pretrained:solo", solo),
                          ("nmcts:8c4", None)):
        bot = menu.make(name, 4)
        assert bot.name == name and bot.path.endswith("ppo_4p.zip"), bot.path
        if weights is not None:
            np.testing.assert_array_equal(bot.evaluator.weights, weights)
    meta = TestClient(create_app(menu=menu), base_url=LOCAL).get("/api/meta").json()
    nmctsg = next(a for a in meta["agents"] if a["name"] == "nmctsg")
    assert nmctsg["example"] == "nmctsg:64h2:solo" and "solo" in nmctsg["param"]


def test_bot_play_of_one_request_stops_at_the_time_budget():
    c = TestClient(create_app(menu=AgentMenu(Limits(step_seconds=0), networks=False)),
                   base_url=LOCAL)
    v = new_game(c, ["random", "random"]).json()
    assert v["notice"] is None
    gid = v["id"]
    v = c.post(f"/api/games/{gid}/step", json={"delta": 10_000}).json()
    assert v["length"] == v["position"] == 1 and "budget" in v["notice"]
    v = c.post(f"/api/games/{gid}/goto", json={"round": 6}).json()
    assert v["length"] == v["position"] == 2 and "step again" in v["notice"]
    v = c.post(f"/api/games/{gid}/step", json={"delta": -1}).json()
    assert v["position"] == 1 and v["notice"] is None
    v = new_game(c, ["human", "random", "random"], seed=4).json()
    while v["human_turn"]:
        v = c.post(f"/api/games/{v['id']}/act", json={"action": v["legal"][0]["id"]}).json()
    assert v["log"][-1]["player"] != 0 and "budget" in v["notice"]


# ------------------------------------------------------------------ Host names
def test_only_allowed_host_names_are_answered(client):
    for host in ("evil.example", "localhost.evil.example", "127.0.0.1.nip.io", "0.0.0.0"):
        assert client.get("/api/meta", headers={"host": host}).status_code == 400
    for host in ("localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000"):
        assert client.get("/api/meta", headers={"host": host}).status_code == 200
    c = TestClient(create_app(host="192.168.1.5", allowed=["mybox.lan"]), base_url=LOCAL)
    for host in ("192.168.1.5:8000", "MyBox.lan"):
        assert c.get("/api/meta", headers={"host": host}).status_code == 200
    assert c.get("/", headers={"host": "other.lan"}).status_code == 400


def test_allowed_hosts_list():
    assert allowed_hosts() == ["localhost", "127.0.0.1", "[::1]"]
    assert allowed_hosts("0.0.0.0", ["Box.lan", "fe80::1"]) == \
        ["localhost", "127.0.0.1", "[::1]", "box.lan", "[fe80::1]"]
    with pytest.raises(ValueError, match="allowed host"):
        allowed_hosts(None, ["http://x/"])


# ------------------------------------------------------------------ request size and nesting
def test_body_size_is_limited(client):
    r = client.post("/api/replays", content=b" " * (MAX_BODY_BYTES + 1),
                    headers={"content-type": "application/json"})
    assert "larger than" in detail(r, 413)
    chunked = client.post("/api/replays", content=iter([b" " * 1_000_000] * 5),
                          headers={"content-type": "application/json"})     # no Content-Length
    assert "larger than" in detail(chunked, 413)


def test_deeply_nested_json_is_a_400(client):
    for body in (b"[" * 100_000, b'{"players": ' + b"[" * 50 + b"]" * 50 + b"}"):
        r = client.post("/api/games", content=body, headers={"content-type": "application/json"})
        assert "levels deep" in detail(r)
    rec = json.dumps(dict(a_record(), extra=json.loads("[" * 40 + "]" * 40)))
    assert "levels deep" in detail(client.post("/api/replays", json={"record": rec}))
    assert "levels deep" in detail(client.post("/api/replays", json={"record": "[" * 100_000}))


def test_json_depth_skips_strings():
    assert json_depth(b'{"a": [1, {"b": "[[[[{{"}], "c": "\\"[["}') == 3
    assert json_depth("[]" * 1000) == 1 and json_depth("") == 0 and json_depth('"["') == 0


# ------------------------------------------------------------------ uploaded records
def test_a_record_cannot_name_a_ruleset_file(client, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"first_secret_key": {"x": 1}}')
    good = a_record()
    answers = set()
    for value in (str(secret), str(tmp_path), str(tmp_path / "missing.json"), "/dev/zero", 7):
        rec = dict(good, config=dict(good["config"], ruleset=value))
        text = detail(client.post("/api/replays", json={"record": json.dumps(rec)}))
        assert "first_secret_key" not in text and "unknown table" not in text
        answers.add(re.sub(r"got .*$", "", text))
        scen = {"version": 3, "scenario": {"num_players": 2, "ruleset": value}, "actions": []}
        text = detail(client.post("/api/replays", json={"record": json.dumps(scen)}))
        assert "scenario.ruleset" in text and "first_secret_key" not in text
    assert len(answers) == 1 and "config.ruleset must be null" in answers.pop()


def test_a_ruleset_the_server_was_started_with_is_accepted(tmp_path):
    rs = tmp_path / "rules.json"
    rs.write_text("{}")
    rec = json.dumps(a_record(ruleset=str(rs)))
    c = TestClient(create_app(rulesets=[str(rs)]), base_url=LOCAL)
    v = c.post("/api/replays", json={"record": rec}).json()
    assert v["length"] == 12 and v["warnings"] == []
    plain = TestClient(create_app(), base_url=LOCAL)
    assert "config.ruleset" in detail(plain.post("/api/replays", json={"record": rec}))


def test_a_bundled_ruleset_name_is_accepted(client):
    """A bundled alternative ruleset is a name the loader resolves before any path."""
    rec = json.dumps(a_record(ruleset="estimates-2026-11"))
    v = client.post("/api/replays", json={"record": rec}).json()
    assert v["length"] == 12 and v["warnings"] == []


@pytest.mark.filterwarnings("ignore:game record version 3 has no checksum")
def test_a_record_without_checksum_replays_with_a_warning(client):
    rec = a_record()
    v = client.post("/api/replays", json={"record": json.dumps(rec)}).json()
    assert v["warnings"] == []
    del rec["checksum"]
    v = client.post("/api/replays", json={"record": json.dumps(rec)}).json()
    assert v["length"] == 12 and len(v["warnings"]) == 1 and "no checksum" in v["warnings"][0]
    v = client.post(f"/api/games/{v['id']}/step", json={"delta": 3}).json()
    assert "without verification" in v["warnings"][0]
    page = client.get("/").text + client.get("/static/app.js").text
    assert 'id="warning"' in page and "v.warnings" in page


# ------------------------------------------------------------------ the Automa seat
def test_automa_seat_watch_to_the_end(client):
    v = new_game(client, ["automa:3", "random"], seed=2).json()
    assert v["seats"] == ["automa:3", "random"] and v["current_player"] == 1
    assert v["automa"] and all(e["after"] == 0 and e["player"] == 0 for e in v["automa"])
    v = client.post(f"/api/games/{v['id']}/step", json={"delta": 10_000}).json()
    assert v["terminal"] and {e["player"] for e in v["log"]} == {1}
    g = Game(GameConfig(num_players=2, seed=2, automa={0: 3}))
    g.apply_sequence([e["action"] for e in v["log"]])
    assert v["score"] == {"breakdown": g.score_breakdown(), "winners": g.winners()}
    assert [e["text"] for e in v["automa"]] == [e["text"] for e in g.automa_events]
    assert [e["after"] for e in v["automa"]] == [e["after"] for e in g.automa_events]
    back = client.post(f"/api/games/{v['id']}/goto", json={"position": 3}).json()
    assert all(e["after"] <= 3 for e in back["automa"])
    rec = client.get(f"/api/games/{v['id']}/record").text
    assert Game.from_json(rec).scores().tolist() == g.scores().tolist()


def test_automa_seat_play_and_undo(client):
    v = new_game(client, ["human", "automa:2", "random"], seed=3).json()
    gid = v["id"]
    assert v["mode"] == "play" and v["human_turn"]
    before = v
    for _ in range(4):
        v = client.post(f"/api/games/{gid}/act", json={"action": v["legal"][0]["id"]}).json()
        assert v["human_turn"] or v["terminal"]
    assert 1 not in {e["player"] for e in v["log"]}
    while v["length"] > before["length"]:
        v = client.post(f"/api/games/{gid}/undo").json()
    assert v["scenario"] == before["scenario"] and v["automa"] == before["automa"]


@pytest.mark.parametrize("body, words", [
    ({"players": ["automa:3"]}, "automa"),
    ({"players": ["automa:1", "automa:2"]}, "Automa"),
    ({"players": ["automa:1", "random"], "clans": "auction"}, "clan_auction"),
])
def test_automa_seats_the_rules_refuse_give_a_400(client, body, words):
    assert words in detail(client.post("/api/games", json=body))


# ------------------------------------------------------------------ reports: no path reaches a file
def test_a_report_request_cannot_reach_another_file(tmp_path):
    """Names that climb out of the reports folder, absolute paths, hidden folders, links to
    folders or files outside, and files of a report other than its three: one 404, naming
    nothing on the server, serving nothing."""
    from caledonia_env.tournament import StudySummary, write_report
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "index.html").write_text("top secret page")
    (outside / "report.json").write_text('{"title": "top secret"}')
    reports = tmp_path / "reports"
    write_report(StudySummary("ok", "c", {}, []), str(reports / "good"))
    (reports / "good" / "secret.txt").write_text("top secret")
    (reports / ".hidden").mkdir()
    (reports / ".hidden" / "index.html").write_text("top secret")
    os.symlink(outside, reports / "linked")
    write_report(StudySummary("ok", "c", {}, []), str(reports / "linkfile"))
    os.unlink(reports / "linkfile" / "index.html")
    os.symlink(outside / "index.html", reports / "linkfile" / "index.html")
    c = TestClient(create_app(limit=2, reports=reports), base_url=LOCAL)
    assert [r["name"] for r in c.get("/api/reports").json()["reports"]] == ["good"]
    for path in ["/reports/../outside/", "/reports/..%2Foutside/", "/reports/%2E%2E/",
                 "/reports/..%2F..%2Fetc%2Fpasswd/", f"/reports/{outside}/",
                 f"/reports/{str(outside).replace('/', '%2F')}/", "/reports/.hidden/",
                 "/reports/linked/", "/reports/linked/report.json", "/reports/linkfile/",
                 "/reports/good/secret.txt", "/reports/good/..%2F..%2Foutside%2Findex.html",
                 "/reports/good/%2E%2E", "/reports/missing/", "/reports/good%00/"]:
        r = c.get(path, follow_redirects=True)
        assert r.status_code == 404, (path, r.status_code, r.text)
        assert "secret" not in r.text and str(tmp_path) not in r.text, path
    assert c.get("/reports/good/").status_code == 200


# ------------------------------------------------------------------ caledonia serve
@pytest.mark.parametrize("argv, words", [
    (["--agent-dir", "/nonexistent/models"], "--agent-dir"),
    (["--max-rollouts", "0"], "max_rollouts"),
    (["--max-seconds", "inf"], "max_seconds"),
    (["--step-seconds", "-1"], "step_seconds"),
    (["--allowed-host", "http://evil/"], "allowed host"),
    (["--reports", "/dev/null"], "--reports"),
])
def test_serve_refuses_bad_security_options(argv, words, capsys):
    parser = argparse.ArgumentParser()
    add_serve_parser(parser.add_subparsers(dest="cmd"))
    assert cmd_serve(parser.parse_args(["serve", *argv])) == 2
    assert words in capsys.readouterr().err


def test_sigterm_stops_the_server_while_bots_play():
    """SIGTERM while a request's bots play (a 30 s budget of mcts:512): the request is
    answered (the bots stop at the next decision, the view says so; or a 503 if a decision
    outlasts the graceful wait), the server exits 143 within seconds, no traceback, no word
    about output files."""
    pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = ("import sys; from caledonia_env.cli import main; "
            "sys.exit(main(['serve','--port','0','--step-seconds','30']))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=root))
    answers = []
    try:
        url = proc.stdout.readline().split()[3]

        def post(path, body):
            req = urllib.request.Request(url + path, json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=120) as r:
                    return r.status, json.load(r)
            except urllib.error.HTTPError as e:
                return e.code, json.load(e)

        gid = post("api/games", {"players": ["mcts:512", "mcts:512"]})[1]["id"]
        worker = threading.Thread(target=lambda: answers.append(
            post(f"api/games/{gid}/step", {"delta": 10_000})), daemon=True)
        worker.start()
        time.sleep(2)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        took = time.monotonic() - t0
        worker.join(timeout=10)
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 143 and took < 20, (code, took, err)
    assert "Traceback" not in err and "CancelledError" not in err and "output" not in err, err
    assert "caledonia serve: stopped (SIGTERM)" in err
    assert len(answers) == 1, "the request in flight was not answered"
    status, view = answers[0]
    if status == 200:
        assert not view["terminal"] and "shutting down" in view["notice"]
    else:
        assert status == 503 and "shutting down" in view["detail"]
