"""The game map: eight module sides, assembled into a Board of numpy arrays (R-1.1).

>>> from caledonia_env.map import build_board
>>> board = build_board("A1,B2,C1,D2", num_players=4)
>>> board.n_nodes == board.n_hex + 4
True

See ``docs/map.md`` for the side-file format, the coordinate system and the
meaning of every Board field. Rendering lives in :mod:`caledonia_env.map.render`
(imported lazily: it needs matplotlib).
"""
from caledonia_env.map.board import MAX_NODES, N_PORTS, Board, all_configs, assemble, build_board, parse_config
from caledonia_env.map.format import (MAPS_DIR, MODULE_CORNER, MODULE_SIDES, MODULES, TERRAIN_FOREST,
                     TERRAIN_LOCH, TERRAIN_MOUNTAIN, TERRAIN_PASTURE, TERRAIN_PORT, MapError,
                     Side, load_side, parse_side)
from caledonia_env.map.reach import UNREACHABLE

__all__ = [
    "build_board", "Board", "MapError", "MODULE_SIDES", "MAX_NODES", "UNREACHABLE",
    "TERRAIN_PASTURE", "TERRAIN_FOREST", "TERRAIN_MOUNTAIN", "TERRAIN_LOCH", "TERRAIN_PORT",
    "N_PORTS", "MODULES", "MODULE_CORNER", "MAPS_DIR", "Side", "load_side", "parse_side",
    "assemble", "parse_config", "all_configs",
]
