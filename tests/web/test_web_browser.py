"""The ``caledonia serve`` page in a real browser (Playwright driving the system Chromium).

What the page shows (units on the map, prices, last action, final scores) is compared with
the engine's state of the same game on the server. Screenshots go to tmp/artifacts/web/.
Skipped, with the reason, when playwright, the web extra or Chromium is missing
(scripts/install_browser.sh installs Debian's chromium).
"""
import importlib.util
import json
import os
import shutil
import socket
import threading
import time

import pytest

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                             shutil.which("chromium") or "") if p and os.path.exists(p)), None)
for _mod in ("playwright", "fastapi", "uvicorn"):
    if importlib.util.find_spec(_mod) is None:
        pytest.skip(f"browser tests need {_mod} (pip install 'caledonia-env[web]')",
                    allow_module_level=True)
if CHROMIUM is None:
    pytest.skip("browser tests need Chromium at /usr/bin/chromium (run "
                "scripts/install_browser.sh)", allow_module_level=True)

import uvicorn  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

from caledonia_env import Game  # noqa: E402
from caledonia_env.agents import make  # noqa: E402
from caledonia_env.cli import main  # noqa: E402
from caledonia_env.engine.market import market_price  # noqa: E402
from caledonia_env.engine.compile.first_run import ESTIMATE_S  # noqa: E402
from caledonia_env.web import app as web_app  # noqa: E402
from caledonia_env.web import create_app  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARTIFACTS = os.path.join(ROOT, "tmp", "artifacts", "web")
TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The server's reports folder (empty until a test writes a report into it)."""
    return tmp_path_factory.mktemp("reports")


@pytest.fixture(scope="module")
def server(reports):
    app = create_app(reports=reports)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not srv.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/", app.state.store
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    os.makedirs(ARTIFACTS, exist_ok=True)
    pg = browser.new_page(viewport={"width": 1280, "height": 800})
    pg.set_default_timeout(TIMEOUT_MS)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server[0])
    pg.wait_for_selector("#seat0")
    yield pg
    pg.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def start(page, seats):
    for i in range(4):
        page.fill(f"#seat{i}", seats[i] if i < len(seats) else "")
    page.click("#start")
    expect(page.locator("#status")).to_contain_text("decision")
    return page.evaluate("() => new URLSearchParams(location.search).get('game')")


def session_of(store, gid):
    return store.get(gid)


def page_units(page):
    return sorted(page.eval_on_selector_all(
        "#overlay .unit", "us => us.map(u => [u.dataset.label, u.dataset.unit, u.dataset.player])"))


def engine_units(game):
    sc = game.to_scenario()
    return sorted([lab, unit, str(p)] for p, pl in enumerate(sc["players"])
                  for lab, unit in pl["units"].items())


def assert_page_shows(page, session):
    game = session.game_at()
    expect(page.locator("#status")).to_contain_text(f"decision {session.pos} / {session.end}")
    assert page_units(page) == engine_units(game)
    sc = game.to_scenario()
    for i, good in enumerate(sc["market"]):
        price = int(market_price(game.state, game.tables, i))
        assert page.inner_text(f"[data-good='{good}']") == f"£{price}"
    for p, pl in enumerate(sc["players"]):
        assert page.inner_text(f"#player-{p} [data-field='money']") == f"£{pl['money']}"


def test_watch_a_bot_game_step_and_jump_to_a_round(page, server):
    gid = start(page, ["greedy", "random", "random"])
    s = session_of(server[1], gid)
    for i in range(1, 4):
        page.click("#next")
        expect(page.locator("#status")).to_contain_text(f"decision {i} / {i}")
    e = s.entries[2]
    expect(page.locator("#last")).to_contain_text(f"P{e.player} {s.seats[e.player]} — {e.name}")
    assert_page_shows(page, s)
    page.click("#prev")
    expect(page.locator("#status")).to_contain_text("decision 2 / 3")
    assert_page_shows(page, s)
    page.click("[data-round='3']")
    expect(page.locator("#status")).to_contain_text("round 3")
    assert s.game_at().round == 3
    assert_page_shows(page, s)
    assert page.locator("#overlay .unit").count() > 0
    page.screenshot(path=os.path.join(ARTIFACTS, "watch.png"))
    page.click("#last-pos")
    expect(page.locator("#status")).to_contain_text("game over")
    game = s.game_at()
    assert game.is_terminal
    totals = page.eval_on_selector_all("#scores td[data-score='total']",
                                       "ts => ts.map(t => Number(t.textContent))")
    assert totals == [int(x) for x in game.scores()]
    assert_page_shows(page, s)


def test_the_first_game_on_a_cold_cache_is_announced_as_compiling(page, server, monkeypatch):
    """With no compiled engine in numba's cache (engine.compile.first_run.engine_cached) the page
    says that the first game compiles it; the note goes once a game has started."""
    expect(page.locator("#compiling")).to_be_hidden()              # the test session's cache
    monkeypatch.setattr(web_app, "engine_cached", lambda: False)
    page.reload()
    page.wait_for_selector("#seat0")
    note = page.locator("#compiling")
    expect(note).to_be_visible()
    expect(note).to_contain_text("compiles the engine for this machine — once, about "
                                 f"{ESTIMATE_S} s")
    start(page, ["greedy", "random"])
    expect(note).to_be_hidden()


def test_play_a_human_turn_by_clicking_a_hex_and_an_action(page, server):
    gid = start(page, ["human", "greedy"])
    s = session_of(server[1], gid)
    for _ in range(10):                 # non-map decisions first (starting pick)
        expect(page.locator("#who")).to_have_class("you")
        if page.locator("#map .hex.target").count():
            break
        n = s.end
        page.locator("#actions button.act").first.click()
        expect(page.locator("#status")).not_to_contain_text(f"decision {n} / {n}")
    target = page.locator("#map .hex.target").first
    label = target.get_attribute("data-label")
    target.click()
    expect(page.locator("#actions .hint")).to_contain_text(f"Actions on {label}")
    buttons = page.locator("#actions button.act")
    assert all(label in t for t in buttons.all_inner_texts())
    page.screenshot(path=os.path.join(ARTIFACTS, "play_hex_chosen.png"))
    name = buttons.first.inner_text()
    n = s.end
    buttons.first.click()
    expect(page.locator("#status")).not_to_contain_text(f"decision {n} / {n}")
    mine = [e for e in s.entries if e.player == 0]
    assert mine[-1].name == name and label in name
    assert_page_shows(page, s)
    assert [label, name.split()[1], "0"] in page_units(page)
    page.screenshot(path=os.path.join(ARTIFACTS, "play.png"))
    page.click("#undo")
    expect(page.locator("#status")).to_contain_text(f"decision {n} / {n}")
    assert s.end == n and [label, name.split()[1], "0"] not in page_units(page)
    assert_page_shows(page, s)


def test_replay_a_record_file_and_reject_a_tampered_one(page, server, tmp_path):
    g = Game(num_players=2, seed=8)
    agents = [make("random", seed=p) for p in range(2)]
    while not g.is_terminal:
        g.step(agents[g.current_player].act(g))
    path = tmp_path / "game.json"
    path.write_text(g.to_json())
    page.set_input_files("#replay-file", str(path))
    expect(page.locator("#status")).to_contain_text(f"decision 0 / {len(g.history)}")
    expect(page.locator("#status")).to_contain_text(f"Replay game.json · map {','.join(g.map)}")
    page.locator("#log li").last.click()
    expect(page.locator("#status")).to_contain_text("game over")
    totals = page.eval_on_selector_all("#scores td[data-score='total']",
                                       "ts => ts.map(t => Number(t.textContent))")
    assert totals == [int(x) for x in g.scores()]
    gid = page.evaluate("() => new URLSearchParams(location.search).get('game')")
    assert_page_shows(page, session_of(server[1], gid))
    page.screenshot(path=os.path.join(ARTIFACTS, "replay.png"))
    bad = json.loads(g.to_json())
    bad["actions"][3] = 0
    path.write_text(json.dumps(bad))
    page.set_input_files("#replay-file", str(path))
    expect(page.locator("#error")).to_contain_text("invalid game record")
    expect(page.locator("#status")).to_contain_text("game over")     # the page kept its game


def test_open_a_balance_report_from_the_page(page, reports):
    """A report written by ``caledonia balance --report`` is listed under Reports and its page
    shows the conclusions, the command and the plot, without JavaScript."""
    folder = reports / "balance_2p"
    argv = ["balance", "--players", "2", "--games", "40", "--agent", "greedy", "--plot", "",
            "-q", "--report", str(folder)]
    assert main(argv) == 0
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    page.click("#reports-link")
    expect(page.locator("h1")).to_have_text("Study reports")
    page.locator("#reports a", has_text=data["title"]).click()
    expect(page.locator("h1")).to_have_text(data["title"])
    assert page.url.endswith("/reports/balance_2p/")
    shown = page.eval_on_selector_all("#conclusions li", "ls => ls.map(l => l.textContent)")
    assert shown == data["conclusions"] and any("above par" in c or "level with par" in c
                                                for c in shown)
    expect(page.locator("#study pre")).to_have_text(data["command"])
    assert page.evaluate("() => document.querySelector('#figures img').naturalWidth") > 0
    assert page.locator("#tables table").count() == len(data["tables"])
    page.screenshot(path=os.path.join(ARTIFACTS, "report.png"), full_page=True)
