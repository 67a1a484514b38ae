"""Validation at the Python API boundary: GameConfig fields, action ids (Game and the three
envs) and scenario dicts (R-1 setup, R-3.3 terrain, R-8 clans) give clear errors and
never change the state or crash the interpreter."""
import pathlib

import numpy as np
import pytest
from conftest import base_scenario

from caledonia_env import Game, GameConfig, IllegalActionError, ScenarioError
from caledonia_env import config as config_module
from caledonia_env.config import ConfigError, ConfigTypeError, clan_options
from caledonia_env.data import automa as automa_data
from caledonia_env.data import names
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.constants import TERRAIN_FOREST, TERRAIN_LOCH, TERRAIN_MOUNTAIN, TERRAIN_PASTURE, TERRAIN_PORT
from caledonia_env.envs.aec import raw_env
from caledonia_env.envs.gym_env import CaledoniaEnv
from caledonia_env.envs.vector import CaledoniaVectorEnv
from caledonia_env.game import action_id, action_ids

BAD_TYPES = [3.7, "12", True, np.bool_(True), None, [3], (3,), np.array([3]), np.array(3.0),
             np.float32(2), {"a": 1}]


# ------------------------------------------------------------ GameConfig
@pytest.mark.parametrize("kw,field", [
    (dict(ports="no"), "ports"), (dict(scoring_tiles=1), "scoring_tiles"),
    (dict(solo="yes"), "solo"), (dict(smaller_map=None), "smaller_map"),
    (dict(num_players=2.0), "num_players"), (dict(num_players=True), "num_players"),
    (dict(seed="1"), "seed"), (dict(seed=1.5), "seed"), (dict(first_player=True), "first_player"),
    (dict(ruleset={"economy": {}}), "ruleset"), (dict(ruleset=3), "ruleset"),
    (dict(map=5), "map"), (dict(clans=5), "clans"), (dict(num_players=2, clans=[1, 2]), "clans"),
])
def test_config_rejects_wrong_types_naming_the_field(kw, field):
    with pytest.raises(ConfigTypeError, match=field) as e:
        GameConfig(**kw)
    assert isinstance(e.value, TypeError) and isinstance(e.value, ValueError)


@pytest.mark.parametrize("kw,match", [
    (dict(num_players=5), r"num_players must be 2 to 4, or 1 with solo=True"),
    (dict(seed=-1), "seed must be a non-negative"),
    (dict(first_player=4), r"first_player must be None or in 0..3"),
    (dict(map="A1,B1"), "allowed sides"),
    (dict(num_players=2, clans=["stewart", "Stewart"]), "'stewart' twice"),
    (dict(num_players=3, clans=["buchanan", "campbell", "buchanan"]), "twice"),
    (dict(extra={"colour": "red"}), r"unknown GameConfig options: \['colour'\]"),
    (dict(interp_export_min_contracts=2 ** 31), r"interp_export_min_contracts .* an int in "
                                                r"0..1000000, got 2147483648"),
    (dict(clans="auction"), "clans must be None/'none'"),
])
def test_config_rejects_wrong_values(kw, match):
    with pytest.raises(ConfigError, match=match):
        GameConfig(**kw)


@pytest.mark.parametrize("clans, kw, mode", [
    ("auction", {"clans": "draft", "clan_auction": True}, "auction"),
    (" Auction ", {"clans": "draft", "clan_auction": True}, "auction"),
    ("draft", {"clans": "draft"}, "draft"), ("none", {"clans": None}, "none"),
    ("", {"clans": None}, "none"), (None, {"clans": None}, "none"),
    (["stewart", None], {"clans": ["stewart", None]}, "fixed"),
])
def test_R_9_4_clan_options_translate_auction(clans, kw, mode):
    assert clan_options(clans) == kw
    assert GameConfig(num_players=2, **clan_options(clans)).clan_mode == mode


def test_names_are_defined_once():
    """Clan names, map modules and player counts come from caledonia_env.data.names."""
    assert config_module.CLAN_NAMES is names.CLANS
    assert config_module.MODULES is names.MODULES is automa_data.MODULES
    assert config_module.PLAYER_COUNTS is names.PLAYER_COUNTS == (1, 2, 3, 4)
    assert names.PLAYER_COUNT_KEYS == ("1", "2", "3", "4")
    assert names.MAX_PLAYERS == len(names.PLAYER_COUNTS)


def test_R_8_config_duplicate_clans_rejected_but_several_players_without_clan_allowed():
    cfg = GameConfig(num_players=3, clans=[None, "none", "stewart"])
    assert cfg.clans == (None, None, "stewart")
    with pytest.raises(ValueError, match="twice"):
        GameConfig(num_players=2, clans=("macdonald", "macdonald"))


def test_config_accepts_numpy_scalars_and_pathlike_and_stays_hashable(tmp_path):
    cfg = GameConfig(num_players=np.int64(2), seed=np.uint32(7), ports=np.bool_(False),
                     ruleset=pathlib.Path(tmp_path), first_player=np.int8(1))
    assert (type(cfg.num_players), type(cfg.seed), type(cfg.ports)) == (int, int, bool)
    assert cfg.ruleset == str(tmp_path) and isinstance(hash(cfg), int)
    assert GameConfig.from_dict(cfg.to_dict()) == cfg
    assert GameConfig.from_dict({"map": "A1,B2,C1,D2"}).map == ("A1", "B2", "C1", "D2")
    with pytest.raises(ConfigTypeError, match="from_dict"):
        GameConfig.from_dict([("seed", 1)])


# ------------------------------------------------------------ action ids
def test_action_id_accepts_ints_numpy_integers_and_0d_arrays():
    for a in (5, np.int64(5), np.int32(5), np.uint16(5), np.array(5), np.array(5, np.int8)):
        assert action_id(a) == 5 and type(action_id(a)) is int
    for a in BAD_TYPES:
        with pytest.raises(TypeError, match="action id must be an int"):
            action_id(a)
    for a in (-1, N_ACTIONS, 10 ** 12):
        with pytest.raises(IllegalActionError, match="outside"):
            action_id(a)
    assert isinstance(IllegalActionError("x"), ValueError)


def test_action_ids_batch():
    assert action_ids([1, 2], 2).tolist() == [1, 2]
    assert action_ids(np.array([[1], [2]]), 2).tolist() == [1, 2]
    assert action_ids(np.int64(4), 1).tolist() == [4]
    for bad in ([1.5, 2.0], ["1", "2"], [True, False], [None, 1]):
        with pytest.raises(TypeError, match="integer action ids"):
            action_ids(bad, 2)
    with pytest.raises(ValueError, match="expected 3 actions"):
        action_ids([1, 2], 3)


def _illegal(game):
    return int(np.flatnonzero(~game.legal_mask())[0])


def test_game_step_rejects_bad_actions_and_keeps_the_state():
    g = Game(num_players=2, seed=3)
    before, history = g.state.copy(), list(g.history)
    for a in BAD_TYPES:
        with pytest.raises(TypeError):
            g.step(a)
    for a in (-1, N_ACTIONS, _illegal(g)):
        with pytest.raises(IllegalActionError):
            g.step(a)
    assert np.array_equal(g.state, before) and g.history == history
    g.step(np.array(g.legal_actions()[0]))      # a 0-d integer array (model.predict) is fine
    assert len(g.history) == 1


def test_aec_step_rejects_bad_actions_and_keeps_the_state():
    env = raw_env(num_players=2)
    env.reset(seed=1)
    agent = env.agent_selection
    before = env.game.state.copy()
    rewards, cum = dict(env.rewards), dict(env._cumulative_rewards)
    for a in [x for x in BAD_TYPES if x is not None]:
        with pytest.raises(TypeError):
            env.step(a)
    for a in (-1, N_ACTIONS, _illegal(env.game)):
        with pytest.raises(IllegalActionError):
            env.step(a)
    assert np.array_equal(env.game.state, before) and env.agent_selection == agent
    assert env.rewards == rewards and env._cumulative_rewards == cum


def test_aec_penalize_mode_still_raises_type_errors():
    env = raw_env(num_players=2, illegal_action="penalize")
    env.reset(seed=1)
    with pytest.raises(TypeError):
        env.step(2.0)
    assert not any(env.terminations.values())
    env.step(N_ACTIONS)                   # out of range: penalized like any illegal id
    assert all(env.terminations.values())


def test_gym_step_rejects_bad_actions_and_keeps_the_state():
    env = CaledoniaEnv(num_players=2)
    env.reset(seed=2)
    before = env.game.state.copy()
    for a in BAD_TYPES:
        with pytest.raises(TypeError):
            env.step(a)
    for a in (-1, N_ACTIONS, _illegal(env.game)):
        with pytest.raises(IllegalActionError):
            env.step(a)
    assert np.array_equal(env.game.state, before)
    env.step(np.int64(np.flatnonzero(env.action_masks())[0]))


def test_vector_step_rejects_bad_action_batches_and_keeps_the_states():
    env = CaledoniaVectorEnv(num_envs=2, num_players=2)
    env.reset(seed=0)
    before = env.states.copy()
    for bad in ([1.0, 2.0], ["1", "2"], [True, True], np.array([None, 1])):
        with pytest.raises(TypeError):
            env.step(bad)
    with pytest.raises(ValueError, match="expected 2 actions"):
        env.step([1, 2, 3])
    assert np.array_equal(env.states, before)
    env.step(env.sample_actions())


# ------------------------------------------------------------ scenarios
def _labels(hexes, terrain, k=1, only=False):
    return [hexes.label(v) for v in hexes.land(terrain, only=only)[:k]]


def _loch(board):
    return next(board.labels[v] for v in range(board.n_nodes)
                if board.terrain[v] & TERRAIN_LOCH and not board.terrain[v] & TERRAIN_PORT)


def test_R_1_current_player_out_of_range_is_an_error_not_a_crash():
    for cur in (7, 2, -1, "0", 1.0, True):
        with pytest.raises(ScenarioError, match="current_player"):
            Game.from_scenario(base_scenario(current_player=cur))


@pytest.mark.parametrize("kw,match", [
    (dict(round=0), r"round must be in 1..5"), (dict(round=9), r"round must be in 1..5"),
    (dict(round=2.0), "round must be an int"),
    (dict(scoring_tiles=["T1", "T2", "T3", "T4", "T5", "T6"]), "scoring_tiles has 6 items"),
    (dict(drawn=[1, 2, 3, 4, 5, 6, 7]), "drawn has 7 items"),
    (dict(slots=[1, 2, 3, 4, 5, 6, 7]), "slots has 7 items"),
    (dict(slots=[1, 1]), "contract 1 is both in slots and in slots"),
    (dict(slots=[1], pile=[2, 1]), "contract 1 is both in slots and in pile"),
    (dict(slots=["1"]), "unknown contract id '1'"),
    (dict(phase="actions", context="production"), "does not occur in phase 'actions'"),
    (dict(phase="later"), "unknown phase"),
    (dict(turn_order=[0, 0]), "permutation"), (dict(turn_order=[0, 1, 2]), "at most 2"),
    (dict(turn_order=[0, True]), r"turn_order\[\] must be an int"),
    (dict(next_turn_order=[1, 1]), "twice"),
    (dict(market={"whisky": 99}), "market price of whisky"),
    (dict(import_track={"cotton": -1}), "import_track.cotton"),
    (dict(ports={"E": "P1"}), "unknown keys"), (dict(rng=0), "rng must be in"),
    (dict(pending={"deck_head": 64}), "deck_head"), (dict(pending={"meat_left": 1}), "meat_left"),
    (dict(pending={"bogus": 1}), "unknown pending field"),
    (dict(done="no"), "done must be true or false"), (dict(players={}), "players must be a list"),
    (dict(num_players=3), "must list 3 players"), (dict(colour=1), "unknown scenario keys"),
    (dict(picks=[{"tile": "S1"}, {"tile": "S1"}]), "starting tile S1 is both"),
    (dict(picks=[{"tile": "S10"}]), "unknown starting tile"),
])
def test_R_1_scenario_top_level_values_are_checked(kw, match):
    with pytest.raises(ScenarioError, match=match):
        Game.from_scenario(base_scenario(**kw))


@pytest.mark.parametrize("player,match", [
    ({"money": -1}, r"players\[0\].money must be in 0"),
    ({"money": 2 ** 40}, "money must be in"),
    ({"goods": {"wool": -2}}, "goods.wool"), ({"goods": {"gold": 1}}, "unknown keys"),
    ({"contracts": [1, 2, 3]}, "contracts has 3 items"),
    ({"contracts": [1, 2]}, "box 1 must be null"),
    ({"contracts": [4], "fulfilled": [4]}, "contract 4 is both"),
    ({"fulfilled": [5, 5]}, "contract 5 is both"),
    ({"cellar": [1, 0]}, "cellar: only a clan with a whisky cellar"),
    ({"cellar": [1]}, r"cellar is \[left, right\]"),
    ({"beer": 2}, "only the brewer"),
    ({"merchants": 8}, "merchants must be in 0..7"),
    ({"merchants": 4, "merchants_on_track": 5}, "a player has 7 merchants"),
    ({"shipping": 99}, "shipping must be in"), ({"passed": 1}, "passed must be true or false"),
    ({"technology": {"miner": "yes"}}, "technology.miner"), ({"ports_used": ["A", "A"]}, "twice"),
    ({"start_tile": "S0"}, "unknown starting tile"), ({"clan": "mcduck"}, "unknown clan"),
    ({"wallet": 3}, "unknown keys"), ({"units": {"Z9-99": "sheep"}}, "unknown hex"),
    ({"units": {"A1-05": "dragon"}}, "unknown unit"),
])
def test_R_8_scenario_player_values_are_checked(player, match):
    d = base_scenario()
    d["players"][0] = player
    with pytest.raises(ScenarioError, match=match):
        Game.from_scenario(d)


def test_R_3_3_units_stand_only_on_their_terrain(hexes):
    pasture = _labels(hexes, TERRAIN_PASTURE, only=True)[0]
    forest = _labels(hexes, TERRAIN_FOREST, only=True)[0]
    mountain = _labels(hexes, TERRAIN_MOUNTAIN, only=True)[0]
    loch = _loch(hexes.b)
    for units in ({forest: "sheep"}, {pasture: "miner"}, {mountain: "lumberjack"},
                  {loch: "distillery"}, {loch: "cow"}):
        d = base_scenario()
        d["players"][0]["units"] = units
        with pytest.raises(ScenarioError, match="cannot stand on hex"):
            Game.from_scenario(d)
    d = base_scenario()
    d["players"][0]["units"] = {pasture: "sheep", forest: "lumberjack", mountain: "miner"}
    assert Game.from_scenario(d).to_scenario()["players"][0]["units"] == d["players"][0]["units"]


def test_R_3_3_one_unit_per_hex(hexes):
    a = _labels(hexes, TERRAIN_PASTURE)[0]
    d = base_scenario()
    d["players"][0]["units"] = {a: "sheep"}
    d["players"][1]["units"] = {a: "cow"}
    with pytest.raises(ScenarioError, match="already holds a unit"):
        Game.from_scenario(d)
    with pytest.raises(ScenarioError, match="already holds a unit"):
        Game.from_scenario(base_scenario(neutral=[a], players=[{"units": {a: "sheep"}}, {}]))


def test_R_3_3_units_within_the_player_board_stock(hexes):
    d = base_scenario()
    d["players"][0]["units"] = {label: "sheep" for label in _labels(hexes, TERRAIN_PASTURE, k=12)}
    with pytest.raises(ScenarioError, match="more sheep on the map than on a player board"):
        Game.from_scenario(d)


def test_R_8_5_fishermen_only_for_macdonald_on_lochs(hexes):
    loch, pasture = _loch(hexes.b), _labels(hexes, TERRAIN_PASTURE)[0]
    d = base_scenario()
    d["players"][0]["units"] = {loch: "fisherman"}
    with pytest.raises(ScenarioError, match="only a clan with fishermen"):
        Game.from_scenario(d)
    d["players"][0]["clan"] = "macdonald"
    assert Game.from_scenario(d).to_scenario()["players"][0]["units"] == {loch: "fisherman"}
    d["players"][0]["units"] = {pasture: "fisherman"}
    with pytest.raises(ScenarioError, match="stands on a loch or a port"):
        Game.from_scenario(d)


def test_R_8_6_cellar_and_R_8_5_technology_only_on_their_clan():
    d = base_scenario()
    d["players"][0] = {"clan": "mackenzie", "cellar": [1, 2]}
    assert Game.from_scenario(d).to_scenario()["players"][0]["cellar"] == [1, 2]
    d["players"][0] = {"clan": "stewart", "cellar": [1, 2]}
    with pytest.raises(ScenarioError, match="whisky cellar"):
        Game.from_scenario(d)
    d["players"][0] = {"clan": "macdonald", "technology": {"miner": True}}
    with pytest.raises(ScenarioError, match="cannot upgrade"):
        Game.from_scenario(d)


def test_R_8_scenario_clans_consistent():
    d = base_scenario()
    d["players"][0]["clan"] = d["players"][1]["clan"] = "stewart"
    with pytest.raises(ScenarioError, match="twice"):
        Game.from_scenario(d)
    d = base_scenario(clans=["stewart", None])
    d["players"][0]["clan"] = "campbell"
    with pytest.raises(ScenarioError, match=r"players\[0\].clan is 'campbell' but clans\[0\]"):
        Game.from_scenario(d)


def test_R_2_scenario_without_a_legal_action_is_rejected():
    d = base_scenario(round=1, phase="setup_workers", context="starting worker")
    with pytest.raises(ScenarioError, match="no action is legal"):
        Game.from_scenario(d)


def test_scenario_must_be_a_dict_of_json_data():
    for bad in (None, [], "players"):
        with pytest.raises(ScenarioError, match="a scenario is a dict"):
            Game.from_scenario(bad)
    with pytest.raises(ScenarioError, match="'players' is required"):
        Game.from_scenario({"num_players": 2})
    d = base_scenario(round=np.int64(2))
    assert Game.from_scenario(d).scenario["round"] == 2


# ------------------------------------------------- the one player-count check
@pytest.mark.parametrize("n, solo, ok", [
    (1, True, True), (2, False, True), (3, False, True), (4, False, True),
    (1, False, False), (5, False, False), (0, False, False), (2, True, False),
    (True, False, False), (2.0, False, False),
])
def test_one_player_count_check_two_to_four_or_one_with_solo(n, solo, ok):
    from caledonia_env.config import MULTIPLAYER_COUNTS, check_player_count
    assert MULTIPLAYER_COUNTS == names.PLAYER_COUNTS[1:] == (2, 3, 4)
    if ok:
        check_player_count(n, solo)
        return
    with pytest.raises(ConfigError, match="num_players must be"):
        check_player_count(n, solo)
    with pytest.raises(ConfigError, match=r"--players must be 2 to 4; got") if not solo else \
            pytest.raises(ConfigError, match="the solo game has one player"):
        check_player_count(n, solo, "--players", solo_flag=None if not solo else "--solo")


def test_the_player_count_check_is_the_one_of_config_tournament_and_envs():
    from caledonia_env import tournament as tn
    from caledonia_env.envs.common import make_config
    msg = r"must be 2 to 4, or 1 with"
    with pytest.raises(ConfigError, match=msg):
        GameConfig(num_players=5)
    with pytest.raises(ConfigError, match=msg):
        make_config(5, {})
    with pytest.raises(ValueError, match=r"--players: the count of agent names .* must be 2 to 4"):
        tn.validate(tn.TournamentSpec(players=("random",) * 5, games=1))
    with pytest.raises(ValueError, match="the solo game has one player"):
        tn.validate(tn.TournamentSpec(players=("random",) * 2, games=1,
                                      config=GameConfig(num_players=1, solo=True)))


def test_clan_modes_are_written_once():
    from caledonia_env.config import CLAN_CHOICES, CLAN_MODES
    assert CLAN_MODES is names.CLAN_MODES == ("none", "draft", "auction", "fixed")
    assert CLAN_CHOICES == CLAN_MODES[:3]
    assert {GameConfig(num_players=2, **clan_options(c)).clan_mode for c in CLAN_CHOICES} \
        == set(CLAN_CHOICES)


# ------------------------------------------------------------- negative seeds, named
@pytest.mark.parametrize("make", [
    lambda: GameConfig(seed=-1),
    lambda: raw_env(num_players=2).reset(seed=-3),
    lambda: CaledoniaEnv(num_players=2).reset(seed=-3),
    lambda: CaledoniaVectorEnv(2, num_players=2, seed=-3),
    lambda: CaledoniaVectorEnv(2, num_players=2).reset(seed=-3),
])
def test_a_negative_seed_is_a_clear_value_error_naming_the_argument(make):
    with pytest.raises(ConfigError, match=r"(seed|reset\(seed=\.\.\.\)) must be a non-negative "
                                          r"int, got -[13]"):
        make()


@pytest.mark.parametrize("argv", [
    ["play", "--players", "random,random", "--seed", "-1", "-q"],
    ["balance", "--players", "2", "--games", "4", "--seed", "-1", "--plot", "", "-q"],
    ["demo", "--seed", "-2", "-o", ""],
])
def test_a_negative_seed_on_the_command_line_is_one_error_line(argv, capsys):
    from caledonia_env.cli import main
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"caledonia {argv[0]}: error: --seed must be a non-negative int")
    assert "Traceback" not in err and err.count("\n") == 1


def test_static_tables_is_the_configs_shared_tables():
    from caledonia_env.game import static_tables
    cfg = GameConfig(num_players=2, seed=3, map="A1,B2,C1,D2")
    game = Game(cfg)
    assert static_tables(cfg) is game.static is static_tables(cfg, game.map)
    assert static_tables(GameConfig(num_players=2, seed=9), game.map) is game.static
    with pytest.raises(ValueError, match="give the sides"):
        static_tables(GameConfig(num_players=2))


def test_a_config_with_automa_seats_pickles():
    """A TournamentSpec's config travels to worker processes (and Ray) pickled."""
    import pickle
    cfg = GameConfig(num_players=3, automa={2: 4})
    back = pickle.loads(pickle.dumps(cfg))
    assert back == cfg and back.automa == {2: 4} and type(back.automa) is type(cfg.automa)


def test_R_3_7_meat_ports_without_meat_left_are_no_pending_work():
    """The engine notes the meat ports at every fulfilled contract (R-3.7, port 1); a contract
    without meat leaves them noted into production, which a scenario may then hold."""
    prod = dict(phase="production", context="production",
                pending={"meat_ports": 1, "production_kind": 0, "production_seat": 0})
    g = Game.from_scenario(base_scenario(**prod))
    assert int(g.state[L.S_MEAT_PORTS]) == 1
    assert np.array_equal(Game.from_scenario(g.to_scenario()).state, g.state)
    prod["pending"]["meat_left"] = [1, 0]
    with pytest.raises(ScenarioError, match=r"pending \['meat_left', 'meat_ports'\]: work of a "
                                            r"turn is pending only in phase 'actions'"):
        Game.from_scenario(base_scenario(**prod))
