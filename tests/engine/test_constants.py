"""The engine's encoding constants: names the lower layers define are the same objects, port
ids are named by their effect in data's PORT_KINDS order, one mask width, one game-over test."""
from caledonia_env import Game, GameConfig
from caledonia_env.data import names
from caledonia_env.engine import constants as C
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import MASK_WIDTH, N_ACTIONS
from caledonia_env.engine.flow import end_game
from caledonia_env.engine.compile.jit import njit
from caledonia_env.map import board, format


def test_names_and_sizes_come_from_the_lower_layers():
    assert C.CLAN_NAMES is names.CLANS and C.N_CLANS == len(names.CLANS)
    assert C.GOOD_NAMES is names.GOODS and C.IMPORT_NAMES is names.IMPORT_GOODS
    assert C.UNIT_NAMES[:C.FISHERMAN] == names.UNITS and C.UNIT_NAMES[C.FISHERMAN] == "fisherman"
    assert C.MAX_NODES is board.MAX_NODES
    for bit in ("PASTURE", "FOREST", "MOUNTAIN", "LOCH", "PORT"):
        assert getattr(C, f"TERRAIN_{bit}") == getattr(format, f"TERRAIN_{bit}")


def test_port_ids_are_named_by_their_effect_in_data_order():
    """PORT_<KIND> is the index of <kind> in data.names.PORT_KINDS (copy_port: PORT_COPY);
    no port constant carries a printed number."""
    for i, kind in enumerate(names.PORT_KINDS):
        assert getattr(C, "PORT_" + kind.upper().removesuffix("_PORT")) == i, kind
    assert C.N_PORT_TILES == len(names.PORT_KINDS)
    assert not [n for n in dir(C) if n[:1] == "P" and n[1:].isdigit()]


def test_terrain_bits_and_table_offsets_do_not_share_a_prefix():
    assert not [n for n in dir(C) if n.startswith("T_")]
    assert all(isinstance(getattr(L, n), int) and 0 <= getattr(L, n) <= L.TABLE_SIZE
               for n in dir(L) if n.startswith("T_"))


def test_one_mask_width_padded_to_words():
    assert MASK_WIDTH % 8 == 0 and N_ACTIONS <= MASK_WIDTH < N_ACTIONS + 8
    g = Game(GameConfig(num_players=2, seed=0))
    g.legal_actions()
    assert g._mask.size == MASK_WIDTH


@njit(cache=True)
def _over_jitted(s):
    return L.game_over(s)


def test_game_over_is_one_test_and_end_game_writes_its_mirrors():
    g = Game(GameConfig(num_players=2, seed=0))
    s = g.state.copy()
    assert not L.game_over(s) and not _over_jitted(s) and not g.is_terminal
    end_game(s)
    assert L.game_over(s) and _over_jitted(s)
    assert (s[L.S_PHASE], s[L.S_DONE], s[L.S_PLAYER]) == (C.PH_OVER, 1, -1)
    g.state[:] = s
    assert g.is_terminal and len(g.legal_actions()) == 0
