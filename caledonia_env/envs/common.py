"""Helpers shared by the env views: config splitting, rendering, infos."""
from __future__ import annotations

import dataclasses

import numpy as np

from caledonia_env.config import GameConfig, check_player_count
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import MAX_PLAYERS, NEUTRAL, OCC_STRIDE, UNIT_NAMES
from caledonia_env.game import PORT_TILE_NAMES, Game, IllegalActionError
from caledonia_env.envs.observation import OBS_SIZE, encode_obs
from caledonia_env.envs.rewards import projected_score_diff, terminal_rewards

ILLEGAL_MODES = ("raise", "penalize")
RENDER_MODES = ("human", "ansi", "rgb_array")
SEED_BOUND = 2**31 - 1


class VecEnvMethods:
    """The attribute / method plumbing of Stable-Baselines3's ``VecEnv`` for envs whose
    games share one Python object (no sub-env processes): every index sees the same value."""

    num_envs: int

    def get_attr(self, attr_name, indices=None):
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name, value, indices=None):
        setattr(self, attr_name, value)

    def env_method(self, method_name, *args, indices=None, **kwargs):
        """``action_masks`` returns each env's own row; other methods run once, shared."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            m = self.action_masks()
            return [m[i] for i in idx]
        result = getattr(self, method_name)(*args, **kwargs)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._indices(indices))

    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return list(indices)


def make_config(num_players, config: dict) -> GameConfig:
    """A validated GameConfig from the env keyword options (``seed`` is the first game's)."""
    check_player_count(num_players, bool(config.get("solo")))
    try:
        return GameConfig(num_players=num_players, **config)
    except TypeError as e:
        fields = sorted(f.name for f in dataclasses.fields(GameConfig) if f.name != "extra")
        raise TypeError(f"{e}; game options are {fields} plus the env options") from None


def check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def observe(game: Game, player: int) -> np.ndarray:
    out = np.empty(OBS_SIZE, np.float32)
    encode_obs(game.state, game.tables, player, out)
    return out


def learner_step(game: Game, action, illegal_action: str) -> str | None:
    """Apply a single-agent env's action: None when applied. An illegal action leaves the
    state unchanged and returns its message (``illegal_action="penalize"``) or raises
    IllegalActionError saying how to make unmasked samplers safe (``"raise"``)."""
    try:
        game.step(action)
    except IllegalActionError as e:
        if illegal_action == "raise":
            raise IllegalActionError(f"{e} (use illegal_action='penalize' for algorithms "
                                     f"that ignore action_masks())") from None
        return str(e)
    return None


def rewards_of(game: Game, mode: int) -> np.ndarray:
    out = np.zeros(MAX_PLAYERS, np.float64)
    terminal_rewards(game.state, game.tables, mode, out)
    return out[:game.num_players]


class Potential:
    """The optional reward shaping of the envs (``shaping=W``): potential-based (Ng, Harada &
    Russell, 1999), ``W * (phi(s') - phi(s))`` added to each step's reward, where ``phi`` is
    every player's projected VP lead (:func:`~.rewards.projected_score_diff`: ``score_diff``
    if the game were scored now, R-7) and ``phi`` = 0 once the game is over. The terms of a
    game sum to ``-W * phi(s0)``, so the return changes by a constant of the first state and
    the best policy is the same; each step then says how much the move changed the lead."""

    def __init__(self, weight):
        weight = float(weight)
        if not (np.isfinite(weight) and weight >= 0):
            raise ValueError(f"shaping must be a finite number >= 0, got {weight}")
        self.weight = weight
        self._out = np.zeros(MAX_PLAYERS, np.float64)
        self._scratch = None
        self.phi = np.zeros(MAX_PLAYERS, np.float64)

    def _value(self, game: Game) -> np.ndarray:
        if game.is_terminal:
            return np.zeros(MAX_PLAYERS, np.float64)
        if self._scratch is None or self._scratch.shape != game.state.shape:
            self._scratch = np.empty_like(game.state)
        projected_score_diff(game.state, game.tables, self._scratch, self._out)
        return self.weight * self._out

    def reset(self, game: Game) -> None:
        """Start a game: remember ``phi`` of its first state."""
        self.phi = self._value(game)

    def step(self, game: Game) -> np.ndarray:
        """Each player's shaping term for the moves since the last call (float64[MAX_PLAYERS])."""
        new = self._value(game)
        delta = new - self.phi
        self.phi = new
        return delta


def final_info(game: Game) -> dict:
    """Score breakdown of every player (R-7) and the winners, as a mask: ``winners[p]`` is 1
    for each player with the most VP (ties shared, R-7). Every field has the same shape in
    every game (libraries that store infos, such as Tianshou's replay buffer, take the
    shapes of the first game)."""
    winners = np.zeros(game.num_players, np.int8)
    winners[game.winners()] = 1
    return {"scores": [int(x) for x in game.scores()], "score_breakdown": game.score_breakdown(),
            "winners": winners}


def render(game: Game, mode):
    """``"human"``: print the text view (returns None); ``"ansi"``: the text view;
    ``"rgb_array"``: the map with units and port tiles."""
    if mode == "human":
        print(game.render_text(), flush=True)
        return None
    if mode == "ansi":
        return game.render_text()
    if mode == "rgb_array":
        # here, not at the top: importing map.render switches matplotlib to its Agg backend
        from caledonia_env.map.render import board_to_rgb_array
        units, tiles = board_pieces(game)
        return board_to_rgb_array(game.board, units=units, port_tiles=tiles)
    return None


def board_pieces(game: Game):
    """{node: (player, unit name)} and {corner: port tile name} for the map renderer."""
    s = game.state
    units = {}
    for v in range(game.board.n_nodes):
        o = int(s[L.S_OCC + v])
        if o == NEUTRAL:
            units[v] = (-1, "neutral")
        elif o >= 0:
            units[v] = (o // OCC_STRIDE, UNIT_NAMES[o % OCC_STRIDE])
    tiles = {c: PORT_TILE_NAMES[int(s[L.S_PORTS + c])] for c in range(4) if s[L.S_PORTS + c] >= 0}
    return units, tiles
