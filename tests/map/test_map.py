"""Map modules, board assembly, reach matrix and rendering (R-1.1, R-1.2, R-3.3, R-4, R-8.4,
R-8.7, R-9.2, R-9.3). Sanity ranges are the ones documented in docs/map.md."""
import copy
import json
import os
from collections import deque

import matplotlib.pyplot as plt
import numpy as np
import pytest

from caledonia_env.map import (MAX_NODES, MODULE_SIDES, TERRAIN_FOREST, TERRAIN_LOCH,
                               TERRAIN_MOUNTAIN, TERRAIN_PASTURE, TERRAIN_PORT, UNREACHABLE, Board,
                               MapError, all_configs, assemble, build_board, parse_side)
from caledonia_env.engine.constants import MAX_NODES as ENGINE_MAX
from caledonia_env.map.format import MAPS_DIR, load_side, odd_r_neighbors
from caledonia_env.map.render import UNIT_SHORT, board_to_rgb_array, render_board

LAND = TERRAIN_PASTURE | TERRAIN_FOREST | TERRAIN_MOUNTAIN
MAX_SHIPPING = 6          # ruleset's top shipping level (5 lochs)
CONFIGS = all_configs()
PLAYERS = (2, 4)
CASES = [(c, n) for c in CONFIGS for n in PLAYERS]


def ids(case):
    return f"{''.join(case[0])}-{case[1]}p"


@pytest.fixture(params=CASES, ids=ids)
def board(request):
    cfg, n = request.param
    return build_board(cfg, num_players=n)


def is_land(b, v):
    return bool(b.terrain[v] & LAND)


def rows(arr, v):
    return {int(w) for w in arr[v] if w >= 0}


# ------------------------------------------------------------------ the eight bundled sides
def test_module_sides_and_files():
    assert MODULE_SIDES == ("A1", "A2", "B1", "B2", "C1", "C2", "D1", "D2")
    for s in MODULE_SIDES:
        side = load_side(s)
        assert side.name == s
        assert 28 <= len(side.hexes) <= 36, s
        assert side.rows % 2 == 0


def test_sixteen_configurations():
    assert len(CONFIGS) == 16 and len(set(CONFIGS)) == 16


# ------------------------------------------------------------------ sizes
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "".join(c))
def test_size_and_max_nodes(cfg):
    b = build_board(cfg, num_players=4)
    assert 110 <= b.n_hex <= 140
    assert b.n_nodes == b.n_hex + 4 <= MAX_NODES
    assert b.labels[b.n_hex:] == ["port-A", "port-B", "port-C", "port-D"]
    for name, dtype, shape in [("terrain", np.uint8, (b.n_nodes,)),
                               ("land_cost", np.int16, (b.n_nodes,)),
                               ("active", np.bool_, (b.n_nodes,)),
                               ("border", np.bool_, (b.n_nodes,)),
                               ("delta", np.bool_, (b.n_nodes,)),
                               ("module", np.int8, (b.n_nodes,)),
                               ("xy", np.float64, (b.n_nodes, 2)),
                               ("adjacent", np.int16, (b.n_nodes, 6)),
                               ("neighbor", np.int16, (b.n_nodes, 6)),
                               ("ship_req", np.int8, (b.n_nodes, b.n_nodes))]:
        a = getattr(b, name)
        assert a.dtype == dtype and a.shape == shape, name
    assert b.river_pairs.dtype == np.int16 and b.river_pairs.shape[1] == 2


def test_max_nodes_matches_engine():
    assert ENGINE_MAX == MAX_NODES


def test_node_order_and_labels():
    b = build_board("A1,B2,C1,D2", num_players=4)
    assert b.config == ("A1", "B2", "C1", "D2")
    mods = b.module[:b.n_hex]
    assert np.all(np.diff(mods) >= 0) and set(mods.tolist()) == {0, 1, 2, 3}
    assert b.module[b.n_hex:].tolist() == [0, 1, 2, 3]
    for v, lab in enumerate(b.labels):
        assert b.node(lab) == v and b.node(lab.lower()) == v
    assert b.labels[0] == "A1-00"
    with pytest.raises(MapError):
        b.node("Z9-99")
    json.dumps(b.to_dict())
    assert build_board(("A1", "B2", "C1", "D2"), 4) is b        # cached, immutable
    with pytest.raises(ValueError):
        b.ship_req[0, 1] = 3


@pytest.mark.parametrize("bad", ["A1,B1,C1", "B1,A1,C1,D1", "A3,B1,C1,D1", "A1,B1,C1,D1,A2", 5])
def test_bad_config(bad):
    with pytest.raises(MapError, match="A1"):
        build_board(bad, num_players=4)


@pytest.mark.parametrize("n", [0, 5, "4"])
def test_bad_player_count(n):
    with pytest.raises(MapError, match="num_players"):
        build_board("A1,B1,C1,D1", num_players=n)


# ------------------------------------------------------------------ per-board invariants
def test_terrain_costs_and_flags(board):
    b = board
    for v in range(b.n_hex):
        t = int(b.terrain[v])
        if t == TERRAIN_LOCH:
            assert b.land_cost[v] == 0 and b.active[v] and not b.border[v] and not b.delta[v]
        else:
            assert t & LAND and not t & ~LAND, b.labels[v]
            assert 1 <= b.land_cost[v] <= 6, b.labels[v]
    for p in range(b.n_hex, b.n_nodes):
        assert b.terrain[p] == TERRAIN_PORT and b.land_cost[p] == 0 and b.active[p]
        assert not b.border[p] and not b.delta[p]


def test_mist_and_active(board):
    """R-1.1 / R-9.1: misted land is inactive with 1-2 players; lochs always active."""
    b = board
    for v in range(b.n_hex):
        if is_land(b, v):
            assert b.active[v] == (not (b.mist[v] and b.num_players <= 2))
        else:
            assert b.active[v]
    if b.num_players == 2:
        assert (~b.active[:b.n_hex]).sum() >= 16


def test_border_definition(board):
    """Border: active land hex with a grid position around it that is off-map or inactive."""
    b = board
    pos = {(int(c), int(r)): v for v, (c, r) in enumerate(b.coords[:b.n_hex])}
    for v in range(b.n_hex):
        expect = False
        if is_land(b, v) and b.active[v]:
            for p in odd_r_neighbors(*map(int, b.coords[v])):
                w = pos.get(p)
                if w is None or not b.active[w]:
                    expect = True
        assert b.border[v] == expect, b.labels[v]
    assert 25 <= b.border.sum() <= 60


def test_adjacency_and_rivers(board):
    b = board
    for v in range(b.n_nodes):
        adj, nb = rows(b.adjacent, v), rows(b.neighbor, v)
        assert nb <= adj and len(adj) <= 6
        for w in adj:
            assert v in rows(b.adjacent, w)
    rivers = {(int(u), int(v)) for u, v in b.river_pairs}
    assert rivers, "every map has rivers"
    for u, v in rivers:
        assert u < v < b.n_hex
        assert is_land(b, u) and is_land(b, v)                 # rivers only between land hexes
        assert v in rows(b.adjacent, u) and v not in rows(b.neighbor, u)
    for u in range(b.n_nodes):
        for w in rows(b.adjacent, u) - rows(b.neighbor, u):
            assert (min(u, w), max(u, w)) in rivers
    for p in range(b.n_hex, b.n_nodes):                        # ports touch edge hexes only
        assert 1 <= len(rows(b.adjacent, p)) <= 6
        for w in rows(b.adjacent, p):
            assert w < b.n_hex and b.module[w] == b.module[p]


def test_deltas(board):
    """R-8.7: deltas touch a river and a loch; every river flowing into a loch marks both banks."""
    b = board
    rivers = {(int(u), int(v)) for u, v in b.river_pairs}
    on_river = {x for pair in rivers for x in pair}
    lochs = set(np.flatnonzero(b.terrain == TERRAIN_LOCH).tolist())
    for v in np.flatnonzero(b.delta):
        assert v in on_river and rows(b.adjacent, v) & lochs, b.labels[v]
    for u, v in rivers:
        common = rows(b.adjacent, u) & rows(b.adjacent, v)
        if common & lochs:
            assert b.delta[u] and b.delta[v], (b.labels[u], b.labels[v])
    assert b.delta.sum() >= 8


def test_terrain_mix(board):
    """Sanity ranges documented in docs/map.md (counts over active land hexes)."""
    b = board
    t = b.terrain[:b.n_hex]
    act = b.active[:b.n_hex] & ((t & LAND) > 0)
    lochs = int((t == TERRAIN_LOCH).sum())
    mixed = sum(1 for v in np.flatnonzero(act) if bin(int(t[v])).count("1") > 1)
    past, forest, mount = (int(((t & bit) > 0)[act].sum())
                           for bit in (TERRAIN_PASTURE, TERRAIN_FOREST, TERRAIN_MOUNTAIN))
    ones = int(((b.land_cost[:b.n_hex] == 1) & act).sum())
    assert 16 <= lochs <= 32
    assert 6 <= mixed <= 16
    workers = 4 * b.num_players                     # lumberjacks (or miners) of all players
    assert forest >= workers + 4 and mount >= workers + 2
    assert past >= 0.55 * act.sum()
    assert 0.08 <= ones / act.sum() <= 0.16          # solo blockers matter, do not choke
    if b.num_players == 4:
        assert 95 <= act.sum() <= 120
    else:
        assert 70 <= act.sum() <= 100


def _components(nodes, edge):
    nodes = list(nodes)
    seen, comps = set(), 0
    for s in nodes:
        if s in seen:
            continue
        comps += 1
        seen.add(s)
        q = deque([s])
        while q:
            u = q.popleft()
            for w in nodes:
                if w not in seen and edge(u, w):
                    seen.add(w)
                    q.append(w)
    return comps


def test_connected_with_max_shipping(board):
    """R-4: every active land hex reaches every other with enough shipping."""
    b = board
    land = [v for v in range(b.n_hex) if is_land(b, v) and b.active[v]]
    ok = b.ship_req <= MAX_SHIPPING
    assert _components(land, lambda u, w: ok[u, w]) == 1
    # and even without crossing any loch (rivers only) the land is one piece
    ok1 = b.ship_req <= 1
    assert _components(land, lambda u, w: ok1[u, w]) == 1


def test_ports_reachable(board):
    """R-5: each port is within reach (some land hex needs at most the top shipping level)."""
    b = board
    land = [v for v in range(b.n_hex) if is_land(b, v) and b.active[v]]
    for p in range(b.n_hex, b.n_nodes):
        reqs = [int(b.ship_req[v, p]) for v in land]
        assert min(reqs) <= 2, b.labels[p]


def test_ship_req_properties(board):
    b = board
    r = b.ship_req.astype(int)
    assert np.array_equal(r, r.T)
    assert np.all(np.diag(r) == UNREACHABLE)
    assert r.min() >= 0 and r.max() <= UNREACHABLE
    lochs = set(np.flatnonzero(b.terrain == TERRAIN_LOCH).tolist())
    for u in range(b.n_nodes):
        if not b.active[u]:
            assert np.all(r[u] == UNREACHABLE)
            continue
        nb, adj = rows(b.neighbor, u), rows(b.adjacent, u)
        for v in range(b.n_nodes):
            if not b.active[v] or u == v:
                assert r[u, v] == UNREACHABLE
                continue
            assert (r[u, v] == 0) == (v in nb)
            assert (r[u, v] == 1) == (v in adj and v not in nb)
            if r[u, v] == 2:                       # exactly one loch between
                assert rows(b.adjacent, u) & rows(b.adjacent, v) & lochs
                assert v not in adj


def test_small_map_ports_and_border_differ():
    b2 = build_board("A1,B1,C1,D1", num_players=2)
    b4 = build_board("A1,B1,C1,D1", num_players=4)
    for p in range(b4.n_hex, b4.n_nodes):
        assert rows(b2.adjacent, p) != rows(b4.adjacent, p)
        assert any(b2.active[w] and is_land(b2, w) or b2.terrain[w] == TERRAIN_LOCH
                   for w in rows(b2.adjacent, p))
    assert not np.array_equal(b2.border, b4.border)
    assert np.array_equal(build_board("A1,B1,C1,D1", 1).active, b2.active)
    assert np.array_equal(build_board("A1,B1,C1,D1", 3).active, b4.active)


def test_seam_lakes_join():
    """Lochs on seam edges join across modules in some configurations."""
    joined = 0
    for cfg in CONFIGS:
        b = build_board(cfg, 4)
        for u, v in zip(*np.nonzero(b.adjacent[:b.n_hex] >= 0)):
            w = b.adjacent[u, v]
            if w < b.n_hex and b.module[u] != b.module[w] and \
                    b.terrain[u] == TERRAIN_LOCH == b.terrain[w]:
                joined += 1
    assert joined > 0


def test_rivers_never_end_on_a_seam():
    """Bundled sides keep every river vertex inside its module (delta flags are per side)."""
    for cfg in CONFIGS[:1] + CONFIGS[-1:]:
        b = build_board(cfg, 4)
        for u, v in b.river_pairs:
            for w in rows(b.adjacent, u) & rows(b.adjacent, v):
                assert b.module[w] == b.module[u] == b.module[v]


# ------------------------------------------------------------------ tiny synthetic board
def _side(name, row0, row1=None, rivers=(), mist=(), delta=(), ports=None, cols=5):
    """A 5x2 side from two strings of terrain letters (P/F/M/L)."""
    row1 = row1 or "P" * cols
    hexes = []
    for r, line in enumerate((row0, row1)):
        for c, ch in enumerate(line):
            hid = r * cols + c
            h = {"id": hid, "col": c, "row": r}
            if ch == "L":
                h["terrain"] = "loch"
            else:
                h["terrain"] = [{"P": "pasture", "F": "forest", "M": "mountain"}[ch]]
                h["cost"] = 2
            h["mist"] = hid in mist
            h["delta"] = hid in delta
            hexes.append(h)
    corner = {"A": "NW", "B": "NE", "C": "SE", "D": "SW"}[name[0]]
    if ports is None:
        ports = {"1-2": [0], "3-4": [cols - 1]} if name[0] in "AB" else \
            {"1-2": [cols], "3-4": [2 * cols - 1]}
    return {"side": name, "grid": {"cols": cols, "rows": 2}, "hexes": hexes,
            "rivers": [list(p) for p in rivers], "ports": {corner: ports}}


def tiny_board(num_players=4):
    # A row 0: P L L P P  -> A-00 and A-03 separated by 2 lochs
    a = _side("A9", "PLLPP", ports={"1-2": [1], "3-4": [1]})
    # B row 0: P L P L P  -> land hex B-02 between two lochs blocks the chain
    b = _side("B9", "PLPLP")
    # C: a river between C9-06 and C9-07 (all land around: no delta)
    c = _side("C9", "PPPPP", "PPPPP", rivers=[(6, 7)])
    # D: a misted hex D9-09; loch D9-02 with the river D9-06|D9-07 flowing into it (deltas)
    d = _side("D9", "PPLPP", "PPPPP", rivers=[(6, 7)], mist=(9,), delta=(6, 7))
    sides = [parse_side(x, source=f"{x['side']}.json") for x in (a, b, c, d)]
    return assemble(sides, num_players)


def test_tiny_board_hand_checked_ship_req():
    bd = tiny_board()
    n = bd.node
    req = bd.ship_req
    assert bd.n_hex == 40 and bd.n_nodes == 44
    # two land hexes separated by 2 lochs need level 3
    assert req[n("A9-00"), n("A9-03")] == 3
    # ids are row * 5 + col; odd-r: (0,0) touches (1,0) and (0,1) only
    assert req[n("A9-00"), n("A9-05")] == 0          # plain neighbors
    # one loch: level 2 (A9-00 -> A9-01 loch -> A9-06 below the loch)
    assert req[n("A9-00"), n("A9-06")] == 2
    # lochs as targets: adjacent loch 0, loch behind a loch 2
    assert req[n("A9-00"), n("A9-01")] == 0
    assert req[n("A9-00"), n("A9-02")] == 2
    # a land hex between lochs blocks: B9-00 -> B9-01 (loch) -> B9-02 (land) -x-> B9-03 (loch)
    assert req[n("B9-00"), n("B9-02")] == 2
    assert req[n("B9-00"), n("B9-03")] == UNREACHABLE
    assert req[n("B9-00"), n("B9-04")] == UNREACHABLE
    # rivers: adjacent across a river needs level 1 and is not a neighbor
    u, v = n("C9-06"), n("C9-07")
    assert req[u, v] == 1 and v not in bd.neighbor[u] and v in bd.adjacent[u]
    # ports: port-A touches only the loch A9-01 -> land next to that loch needs level 2
    pa = n("port-A")
    assert req[n("A9-00"), pa] == 2 and req[n("A9-06"), pa] == 2
    assert req[n("A9-03"), pa] == 3                  # via A9-02, A9-01
    assert req[n("A9-01"), pa] == 0                  # a fisherman on the loch is a neighbor
    # deltas from data
    assert bd.delta[n("D9-06")] and bd.delta[n("D9-07")] and not bd.delta[n("C9-06")]
    assert req[n("D9-06"), n("D9-07")] == 1


def test_tiny_board_mist():
    b2, b4 = tiny_board(2), tiny_board(4)
    m = b2.node("D9-09")
    assert b4.active[m] and not b2.active[m]
    assert np.all(b2.ship_req[m] == UNREACHABLE) and np.all(b2.ship_req[:, m] == UNREACHABLE)
    # its active neighbours become border hexes in the small map
    for w in b2.adjacent[m]:
        if w >= 0 and w < b2.n_hex and b2.terrain[w] & LAND:
            assert b2.border[w]


# ------------------------------------------------------------------ bad input
def _a1():
    with open(os.path.join(MAPS_DIR, "A1.json")) as f:
        return json.load(f)


def _hex(data, hid):
    return next(h for h in data["hexes"] if h["id"] == hid)


def _expect(data, *needles):
    with pytest.raises(MapError) as e:
        parse_side(data, source="A1.json")
    msg = str(e.value)
    assert "A1.json" in msg
    for s in needles:
        assert s in msg, msg
    return msg


def test_bad_missing_field():
    d = _a1()
    del _hex(d, 5)["terrain"]
    _expect(d, "A1-05", "terrain")
    d = _a1()
    del _hex(d, 6)["cost"]
    _expect(d, "A1-06", "cost")


def test_bad_unknown_terrain():
    d = _a1()
    _hex(d, 5)["terrain"] = ["swamp"]
    _expect(d, "A1-05", "swamp")


def test_bad_cost():
    d = _a1()
    _hex(d, 9)["cost"] = 7
    _expect(d, "A1-09", "cost")
    d = _a1()
    _hex(d, 2)["cost"] = 3          # a loch with a land cost
    _expect(d, "A1-02")


def test_bad_river_between_non_adjacent():
    d = _a1()
    d["rivers"].append([0, 20])
    _expect(d, "A1-00", "A1-20", "non-adjacent")


def test_bad_river_on_loch():
    d = _a1()
    d["rivers"].append([7, 8])       # A1-08 is a loch
    _expect(d, "A1-08", "loch")


def test_bad_duplicate_id():
    d = _a1()
    dup = copy.deepcopy(_hex(d, 5))
    dup["col"], dup["row"] = 0, 0    # a free position, same id
    d["hexes"].append(dup)
    _expect(d, "A1-05", "duplicate")


def test_bad_delta_without_river():
    d = _a1()
    _hex(d, 9)["delta"] = True       # A1-09 touches a loch but no river
    _expect(d, "A1-09", "delta", "no river")


def test_bad_missing_delta_at_river_mouth():
    d = _a1()
    _hex(d, 12)["delta"] = False
    _expect(d, "A1-12", "delta")


def test_bad_seam_hole_and_grid():
    d = _a1()
    d["hexes"] = [h for h in d["hexes"] if (h["col"], h["row"]) != (5, 2)]
    _expect(d, "seam")
    d = _a1()
    d["grid"]["rows"] = 5
    _expect(d, "even")


def test_bad_ports():
    d = _a1()
    d["ports"] = {"SE": d["ports"]["NW"]}
    _expect(d, "NW")
    d = _a1()
    d["ports"]["NW"]["1-2"] = [0, 4]        # both misted land
    _expect(d, "1-2", "misted")


def test_bad_file_names_file(tmp_path):
    d = _a1()
    _hex(d, 5)["terrain"] = ["swamp"]
    p = tmp_path / "A1.json"
    p.write_text(json.dumps(d))
    with pytest.raises(MapError, match=r"A1\.json: hex A1-05"):
        load_side(str(p))
    with pytest.raises(MapError, match="A1.json"):
        build_board((str(p), "B1", "C1", "D1"), 4)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(MapError, match="bad.json"):
        load_side(str(tmp_path / "bad.json"))


def test_custom_side_file(tmp_path):
    """A typed-in side can replace a bundled one by path."""
    d = _a1()
    _hex(d, 9)["cost"] = 6
    p = tmp_path / "A1.json"
    p.write_text(json.dumps(d))
    b = build_board((str(p), "B1", "C1", "D1"), 4)
    assert b.land_cost[b.node("A1-09")] == 6


# ------------------------------------------------------------------ rendering and CLI
def test_render_and_rgb():
    b = build_board("A1,B2,C1,D2", num_players=2)
    fig = render_board(b, units={b.node("A1-12"): (0, "distillery"), b.node("C1-07"): (1, "sheep")},
                       port_tiles={0: "P3", 1: "P7"})
    assert fig.axes
    plt.close(fig)
    img = board_to_rgb_array(b, dpi=30)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.std() > 10


def _legend_texts(fig):
    return [t.get_text() for lg in fig.findobj(lambda a: type(a).__name__ == "Legend")
            for t in lg.get_texts()]


def test_render_legend_explains_every_symbol_drawn():
    """Every unit code drawn has a legend entry naming the unit, every player with units has
    its colour (with the label given, e.g. the clan), and the map features drawn are listed."""
    import matplotlib.pyplot as plt
    b = build_board("A1,B2,C1,D2", num_players=2)
    units = {b.node("A1-12"): (0, "distillery"), b.node("C1-07"): (1, "sheep"),
             b.node("B2-07"): (1, "lumberjack"), b.node("D2-05"): (-1, "neutral")}
    fig = render_board(b, units=units, port_tiles={0: "P3"}, player_labels=["stewart", ""])
    texts = _legend_texts(fig)
    plt.close(fig)
    for name in ("distillery", "sheep", "lumberjack", "neutral piece (blocked)",
                 "player 0: stewart", "player 1", "land cost (£)", "river", "mist (inactive)",
                 "active-map border", "port (P1-P9: its printed tile number)", "hex id (A2-07)"):
        assert name in texts, (name, texts)
    assert "cow" not in texts                       # only the units drawn are explained
    drawn = {t.get_text() for t in fig.axes[0].texts}
    assert {UNIT_SHORT[u] for _, u in units.values()} <= drawn


def test_cli(tmp_path, capsys):
    from caledonia_env.map.__main__ import main
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    assert "--config A1,B2,C1,D2" in capsys.readouterr().out
    out = tmp_path / "m.png"
    assert main(["--config", "A1,B2,C1,D2", "--players", "4", "-o", str(out), "--dpi", "30"]) == 0
    assert out.stat().st_size > 1000
    assert main(["--config", "A1,B2,C1", "--info"]) == 2
    assert main(["--validate", "A1", "D2"]) == 0


def test_board_type():
    assert isinstance(build_board("A2,B2,C2,D2", 3), Board)


def test_docs_example_side_is_valid():
    """The JSON example in docs/map.md parses (docs stay in sync with the format)."""
    import re
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "map.md")
    if not os.path.exists(path):                      # pragma: no cover - docs not shipped
        pytest.skip("docs/map.md not present")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"```json\n(.*?)```", text, re.S).group(1)
    side = parse_side(json.loads(block), source="docs/map.md")
    assert side.rivers == ((2, 5), (5, 6))
    assert [h.id for h in side.hexes if h.delta] == [2, 5]
