"""Checkpoint loading within limits (agents/checkpoint.py): only regular files, size caps on
the archive and its members, finite weights, shapes checked against the metadata before a
network is built, player-count mismatches; the one NumPy copy of a loaded network
(agents/network.py NetArrays) playing the same actions as torch and numba; the model cards
of the shipped checkpoints."""
import io
import json
import os
import re
import threading
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from caledonia_env import Game, GameConfig  # noqa: E402
from caledonia_env.agents import checkpoint as ck  # noqa: E402
from caledonia_env.agents import policy  # noqa: E402
from caledonia_env.agents.netroll import policy_action, policy_weights  # noqa: E402
from caledonia_env.agents.network import NetArrays  # noqa: E402
from caledonia_env.data import load_ruleset  # noqa: E402
from caledonia_env.data.safe_io import MAX_JSON_DEPTH  # noqa: E402
from caledonia_env.agents.search_values import search_net  # noqa: E402
from caledonia_env.engine.actions import N_ACTIONS  # noqa: E402
from caledonia_env.engine.layout import S_PLAYER  # noqa: E402
from caledonia_env.engine.mask import legal_mask  # noqa: E402
from caledonia_env.envs.observation import OBS_SIZE, encode_obs  # noqa: E402

ARCH = ck.Arch(16, (8,), (8,))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A small 2-player checkpoint with a value head (random weights)."""
    torch.manual_seed(3)
    net = ck.build_actor_critic(ARCH, OBS_SIZE, N_ACTIONS)
    path = tmp_path_factory.mktemp("ck") / "small.zip"
    ck.save(path, ck.sb3_state(net.state_dict()), ck.make_meta(ARCH, 2, 0))
    return str(path)


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read(ck.META_NAME)), zf.read(ck.WEIGHTS_NAME)


def _write(path, meta, weights, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        zf.writestr(ck.META_NAME, json.dumps(meta))
        zf.writestr(ck.WEIGHTS_NAME, weights)
    return str(path)


def _weights(sd) -> bytes:
    buf = io.BytesIO()
    torch.save(sd, buf)
    return buf.getvalue()


# ------------------------------------------------------------ only regular files
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "x.zip"
    os.mkfifo(fifo)
    out = []

    def run():
        try:
            ck.load(fifo)
        except ck.CheckpointError as e:
            out.append(str(e))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "loading a FIFO blocked"
    assert out and "not a regular file" in out[0]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_device_is_refused_before_reading():
    with pytest.raises(ck.CheckpointError, match="not a regular file"):
        ck.load("/dev/zero")
    with pytest.raises(ck.CheckpointError, match="not a regular file"):
        ck.file_sha256("/dev/zero")


# ------------------------------------------------------------ size limits
def test_an_archive_over_the_size_limit_is_refused_unread(tmp_path, small, monkeypatch):
    monkeypatch.setattr(ck, "MAX_ARCHIVE_BYTES", os.path.getsize(small) - 1)
    with pytest.raises(ck.CheckpointError, match="larger than .* bytes.*MAX_ARCHIVE_BYTES"):
        ck.load(small)


def test_a_zip_bomb_is_refused_before_it_inflates(tmp_path, small, monkeypatch):
    meta, _ = _members(small)
    bomb = _write(tmp_path / "bomb.zip", meta, b"\0" * (8 * 2**20), zipfile.ZIP_DEFLATED)
    assert os.path.getsize(bomb) < 2**16           # 8 MB of zeros deflate to a few KB
    monkeypatch.setattr(ck, "MAX_MEMBER_BYTES", 2**20)
    with pytest.raises(ck.CheckpointError, match="inflates to .* over the limit"):
        ck.load(bomb)


def test_an_oversized_metadata_member_is_refused(tmp_path, small):
    meta, w = _members(small)
    meta["padding"] = "x" * (ck.MAX_META_BYTES + 1)
    with pytest.raises(ck.CheckpointError, match="caledonia_ppo.json.*over the limit"):
        ck.load(_write(tmp_path / "m.zip", meta, w))


# ------------------------------------------------------------ weights and shapes
def test_non_finite_weights_are_refused(tmp_path, small):
    meta, _ = _members(small)
    sd = dict(ck.load(small).state_dict)
    for bad in (float("nan"), float("inf")):
        sd["action_net.bias"] = torch.full_like(sd["action_net.bias"], bad)
        with pytest.raises(ck.CheckpointError, match="'action_net.bias' holds NaN or infinite"):
            ck.load(_write(tmp_path / "nan.zip", meta, _weights(sd)))


def test_a_huge_architecture_is_refused_before_allocating(tmp_path, small):
    meta, w = _members(small)
    meta["arch"]["features_dim"] = 10**12
    with pytest.raises(ck.CheckpointError, match="bad architecture.*layer sizes must be 1 to"):
        ck.load(_write(tmp_path / "huge.zip", meta, w))
    meta["arch"]["features_dim"] = ck.MAX_LAYER_WIDTH     # allowed width, wrong tensors
    with pytest.raises(ck.CheckpointError, match=r"features_extractor.net.0.weight has shape "
                                                 r"\(16, \d+\), the metadata gives \(16384"):
        ck.load(_write(tmp_path / "wide.zip", meta, w))


def test_weights_in_torch_legacy_format_are_refused(tmp_path, small):
    meta, _ = _members(small)
    buf = io.BytesIO()
    torch.save(dict(ck.load(small).state_dict), buf, _use_new_zipfile_serialization=False)
    with pytest.raises(ck.CheckpointError, match="not in torch's zip format"):
        ck.load(_write(tmp_path / "legacy.zip", meta, buf.getvalue()))


def test_a_missing_policy_tensor_is_refused(tmp_path, small):
    meta, _ = _members(small)
    sd = {k: v for k, v in ck.load(small).state_dict.items() if k != "action_net.weight"}
    with pytest.raises(ck.CheckpointError, match="'action_net.weight' is missing"):
        ck.load(_write(tmp_path / "part.zip", meta, _weights(sd)))


def test_an_unknown_tensor_is_refused_and_named(tmp_path, small):
    """A tensor the metadata's architecture has no place for (a layer of another network,
    an optimizer's state) used to load without a word."""
    meta, _ = _members(small)
    sd = dict(ck.load(small).state_dict)
    sd["extra_head.weight"] = torch.zeros(3, 4)
    with pytest.raises(ck.CheckpointError, match=r"1 tensor the architecture in the metadata "
                                                 r"has no place for: 'extra_head.weight'"):
        ck.load(_write(tmp_path / "extra.zip", meta, _weights(sd)))
    sd.update({f"x{i}": torch.zeros(1) for i in range(7)})
    with pytest.raises(ck.CheckpointError, match=r"8 tensors .*'extra_head.weight', 'x0', "
                                                 r"'x1', 'x2', 'x3' and 3 more"):
        ck.load(_write(tmp_path / "extra8.zip", meta, _weights(sd)))


def test_an_extra_policy_layer_is_an_unknown_tensor(tmp_path, small):
    """One more hidden layer than the metadata says: named, not silently dropped."""
    meta, _ = _members(small)
    sd = dict(ck.load(small).state_dict)
    sd["mlp_extractor.policy_net.2.weight"] = torch.zeros(8, 8)
    with pytest.raises(ck.CheckpointError, match="'mlp_extractor.policy_net.2.weight'"):
        ck.load(_write(tmp_path / "deeper.zip", meta, _weights(sd)))


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_deeply_nested_metadata_is_one_error_not_a_traceback(tmp_path, small, depth):
    meta, w = _members(small)
    text = json.dumps(meta)[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"
    path = tmp_path / "deep.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(ck.META_NAME, text)
        zf.writestr(ck.WEIGHTS_NAME, w)
    with pytest.raises(ck.CheckpointError, match=f"unreadable metadata \\(JSON nested deeper "
                                                 f"than {MAX_JSON_DEPTH} levels\\)"):
        ck.load(path)


def test_metadata_that_is_not_utf8_or_not_json_is_one_error(tmp_path, small):
    _, w = _members(small)
    for i, (text, why) in enumerate(((b"\xff{}", "not UTF-8 text"),
                                     (b"{", "malformed JSON at line 1"))):
        path = tmp_path / f"bad{i}.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(ck.META_NAME, text)
            zf.writestr(ck.WEIGHTS_NAME, w)
        with pytest.raises(ck.CheckpointError, match=f"unreadable metadata \\({why}"):
            ck.load(path)


# ------------------------------------------------------------ player counts
def test_a_checkpoint_for_another_player_count_warns_or_fails(small):
    with pytest.warns(ck.PlayerCountWarning, match="trained for 2-player games, not for 3"):
        ck.load(small, num_players=3)
    with pytest.raises(ck.CheckpointError, match="trained for 2-player games, not for 1 player;"):
        ck.load(small, num_players=1, strict_players=True)
    assert ck.load(small, num_players=2, strict_players=True).meta["num_players"] == 2


# ------------------------------------------------------------ ruleset fingerprint
def test_new_checkpoints_record_the_ruleset_they_were_trained_on(tmp_path):
    from caledonia_env.train.trainer import TrainConfig, Trainer
    assert ck.make_meta(ARCH, 2, 0)["ruleset_fingerprint"] == load_ruleset().fingerprint()
    over = tmp_path / "o.json"
    over.write_text(json.dumps({"units": {"sheep": {"cost": 5}}}))
    run = Trainer(TrainConfig(out=str(tmp_path / "r"), game={"ruleset": str(over)}))
    want = load_ruleset(str(over)).fingerprint()
    assert run.ruleset_fingerprint() == want != load_ruleset().fingerprint()


# ------------------------------------------------------------ the CLI
def _evaluate(capsys, *argv):
    from caledonia_env.cli import main
    code = main(["evaluate", *argv, "--games", "1", "--league-file", "", "-q"])
    return code, capsys.readouterr().err


def test_cli_evaluate_prints_one_error_line_and_exits_2(tmp_path, small, capsys):
    fifo = tmp_path / "x.zip"
    os.mkfifo(fifo)
    meta, _ = _members(small)
    sd = dict(ck.load(small).state_dict)
    sd["features_extractor.net.0.bias"] = torch.full((16,), float("nan"))
    nan = _write(tmp_path / "nan.zip", meta, _weights(sd))
    for path, why in ((str(fifo), "not a regular file"), (nan, "NaN or infinite")):
        code, err = _evaluate(capsys, path)
        assert code == 2
        assert err.count("\n") == 1 and err.startswith("caledonia evaluate: error: ")
        assert why in err


def test_cli_evaluate_warns_in_one_line_on_another_player_count(small, capsys):
    code, err = _evaluate(capsys, small, "--players", "3", "--vs", "random")
    assert code == 0
    assert ("caledonia evaluate: warning: " + small + " was trained for 2-player games, "
            "not for 3 players") in err


# ------------------------------------------------------------ the one NumPy copy
def _positions(n_games=3, moves=60):
    """(state, tables) copies of positions with more than one legal move."""
    out = []
    mask = np.zeros(N_ACTIONS, np.int8)
    for seed in range(n_games):
        g = Game(GameConfig(num_players=2, seed=seed))
        rng = np.random.default_rng(seed)
        for _ in range(moves):
            if g.is_terminal:
                break
            legal_mask(g.state, g.tables, mask)
            if mask.sum() > 1:
                out.append((g.state.copy(), g.tables))
            g.step(int(rng.choice(np.flatnonzero(mask))))
    return out


def test_numpy_numba_and_torch_play_the_same_actions(small):
    module, meta = policy.load_network(small, critic=True)
    arrays = search_net(module, meta)
    assert policy_weights(module, meta) is arrays is policy.network_arrays(module, meta)
    assert policy.load_network(small, critic=True)[0] is module      # one cached load
    actor = policy.load_network(small)[0]
    player = policy.PolicyPlayer(actor, name="t")
    assert policy_weights(actor, meta) is not arrays                 # another module
    mask = np.zeros(N_ACTIONS, np.int8)
    obs = np.zeros(OBS_SIZE, np.float32)
    buf = np.empty(N_ACTIONS, np.float32)
    positions = _positions()
    assert len(positions) > 50
    for s, T in positions:
        legal_mask(s, T, mask)
        encode_obs(s, T, int(s[S_PLAYER]), obs)
        legal = np.flatnonzero(mask)
        hidden, _ = arrays.evaluate(obs)
        by_numpy = int(legal[np.argmax(arrays.logits(hidden, legal))])
        by_numba = int(policy_action(s.copy(), T, *arrays.args(), 0.0, mask, obs, buf))
        by_torch = int(player.act_batch(obs[None], mask[None])[0])
        assert by_numpy == by_numba == by_torch


def test_net_arrays_of_an_actor_have_no_value():
    actor = ck.build_actor(ARCH, OBS_SIZE, N_ACTIONS)
    a = NetArrays(actor, "relu")
    hidden, v = a.evaluate(np.ones(OBS_SIZE, np.float32))
    assert not a.has_value and v == 0.0 and hidden.shape == (8,)


# ------------------------------------------------------------ model cards
CARD_FIELDS = ("observation size", "observation fingerprint", "ruleset fingerprint")


def _card_value(text: str, field: str) -> str:
    m = re.search(rf"^- \*\*{field}\*\*: `([^`]+)`", text, re.M | re.I)
    assert m, f"the card has no '- **{field}**: `...`' line"
    return m.group(1)


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(ck.PRETRAINED_DIR)
                                        if f.endswith(".zip")))
def test_every_shipped_checkpoint_has_a_matching_model_card(name):
    card = os.path.join(ck.PRETRAINED_DIR, name[:-4] + ".md")
    assert os.path.isfile(card), f"{name} has no model card {os.path.basename(card)}"
    text = open(card, encoding="utf-8").read()
    meta = ck.load(os.path.join(ck.PRETRAINED_DIR, name)).meta
    assert int(_card_value(text, "observation size")) == meta["obs_size"]
    assert _card_value(text, "observation fingerprint") == meta["obs_fingerprint"]
    stated = _card_value(text, "ruleset fingerprint")
    if "ruleset_fingerprint" in meta:
        assert stated == meta["ruleset_fingerprint"]
    else:           # older than fingerprints in checkpoints: the card says so
        assert re.fullmatch(r"[0-9a-f]{64}", stated)
        assert "predates ruleset fingerprints" in text
        # the stated fingerprint names the numbers the policy was trained on, kept as a
        # named ruleset after the defaults move
        assert load_ruleset("estimates-2026-11").matches_fingerprint(stated)
    assert f"{meta['timesteps']:,}" in text
    assert os.path.basename(name[:-4] + "_eval.csv") in text

