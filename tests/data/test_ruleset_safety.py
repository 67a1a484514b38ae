"""Hostile ruleset overrides: each is one RulesetError naming the file and field (docs/ruleset.md)."""

from __future__ import annotations

import json
import os

import pytest

from caledonia_env.cli import main as cli_main
from caledonia_env.data import DEFAULT_RULESET_DIR, RulesetError, load_ruleset
from caledonia_env.data.automa import AUTOMA_DIR, AutomaDataError, load_automa
from caledonia_env.data.names import MAX_VALUE
from caledonia_env.data.safe_io import (MAX_JSON_DEPTH, InputError, check_depth, decode_utf8,
                                        parse_json, read_bytes, read_text)


def _override(tmp_path, data: dict | str, name="o.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize("over, field", [
    ({"units": {"sheep": {"cost": 2 ** 31}}}, "unit 'sheep', field 'cost'"),
    ({"units": {"sheep": {"cost": 10 ** 30}}}, "unit 'sheep', field 'cost'"),
    ({"setup": {"auction_max_bid": 10 ** 9}}, "field 'auction_max_bid'"),
    ({"export_board": {"contract_cost_by_round": [-2 ** 40, 0, 0, 0, 0]}},
     "field 'contract_cost_by_round', item 1"),
    ({"solo": {"price_die": [1, -1, 2, -2, MAX_VALUE + 1, -3]}}, "field 'price_die', item 5"),
])
def test_integers_are_bounded(tmp_path, over, field):
    path = _override(tmp_path, over)
    with pytest.raises(RulesetError) as ex:
        load_ruleset(path)
    msg = str(ex.value)
    assert msg.startswith(f"{path}: table '{next(iter(over))}', {field}: must be ")
    assert f"-{MAX_VALUE}..{MAX_VALUE}" in msg and "\n" not in msg


def test_largest_allowed_integer_loads(tmp_path):
    rs = load_ruleset(_override(tmp_path, {"units": {"sheep": {"cost": MAX_VALUE}}}))
    assert rs.units.cost[0] == MAX_VALUE


def test_float_is_not_an_integer(tmp_path):
    path = _override(tmp_path, '{"units": {"sheep": {"cost": 1e30}}}')
    with pytest.raises(RulesetError, match=r"unit 'sheep', field 'cost': expected an integer, "
                                           r"got 1e\+30"):
        load_ruleset(path)


def test_contracts_csv_integers_are_bounded(tmp_path):
    lines = (DEFAULT_RULESET_DIR / "contracts.csv").read_text().splitlines()
    cells = lines[1].split(",")
    cells[1] = str(2 ** 31)
    (tmp_path / "contracts.csv").write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]))
    with pytest.raises(RulesetError, match=r"contracts.csv: table 'contracts', row 1 \(id 1\), "
                                           r"column 'need_wool': must be <= 1000000"):
        load_ruleset(tmp_path)


def test_contracts_csv_huge_cell(tmp_path):
    header = (DEFAULT_RULESET_DIR / "contracts.csv").read_text().splitlines()[0]
    (tmp_path / "contracts.csv").write_text(header + "\n" + "9" * 200_000 + "\n")
    with pytest.raises(RulesetError, match=r"contracts.csv: table 'contracts', line \d+: "
                                           r"malformed CSV"):
        load_ruleset(tmp_path)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_deep_json_nesting(tmp_path, depth):
    path = _override(tmp_path, '{"setup": {"note": ' + "[" * depth + "]" * depth + "}}")
    with pytest.raises(RulesetError, match=f"^{path}: table '\\*': JSON nested deeper than "
                                           f"{MAX_JSON_DEPTH} levels$"):
        load_ruleset(path)


def test_deep_nesting_in_a_table_file_and_a_mapping(tmp_path):
    (tmp_path / "units.json").write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(RulesetError, match=r"units.json: table 'units': JSON nested deeper"):
        load_ruleset(tmp_path)
    deep: list = []
    for _ in range(MAX_JSON_DEPTH + 5):
        deep = [deep]
    with pytest.raises(RulesetError, match=r"^<override>: JSON nested deeper"):
        load_ruleset({"setup": {"note": deep}})


def test_duplicate_keys_are_refused_naming_the_key_and_file(tmp_path):
    """Plain JSON keeps the last of two equal keys silently; a ruleset file refuses it."""
    path = _override(tmp_path, '{"units": {"sheep": {"cost": 2, "cost": 3}}}')
    with pytest.raises(RulesetError, match=f"^{path}: table '\\*': duplicate key 'cost' "
                                           f"in one JSON object"):
        load_ruleset(path)
    folder = tmp_path / "rs"
    folder.mkdir()
    units = (DEFAULT_RULESET_DIR / "units.json").read_text()
    (folder / "units.json").write_text('{"source": "x", ' + units.lstrip()[1:])
    assert '"source"' in units       # the default gives "source" too: now it is twice
    with pytest.raises(RulesetError, match=r"units.json: table 'units': duplicate key 'source'"):
        load_ruleset(folder)


def test_duplicate_keys_in_automa_json_are_refused(tmp_path):
    text = (AUTOMA_DIR / "automa.json").read_text()
    (tmp_path / "automa.json").write_text('{"levels": [], ' + text.lstrip()[1:])
    with pytest.raises(AutomaDataError, match=r"automa.json: duplicate key 'levels'"):
        load_automa(str(tmp_path))


def test_parse_json_keeps_duplicates_unless_asked():
    assert parse_json('{"a": 1, "a": 2}') == {"a": 2}
    with pytest.raises(InputError, match=r"^duplicate key 'a' in one JSON object"):
        parse_json('{"b": {"a": 1, "a": 2}}', unique_keys=True)
    with pytest.raises(InputError, match="nested deeper"):
        parse_json("[" * 100_000 + "]" * 100_000, unique_keys=True)


def test_huge_json_number(tmp_path):
    path = _override(tmp_path, '{"units": {"sheep": {"cost": ' + "9" * 5000 + "}}}")
    with pytest.raises(RulesetError, match=r"table '\*': invalid JSON number"):
        load_ruleset(path)


def test_non_utf8_file(tmp_path):
    (tmp_path / "units.json").write_bytes(b'{"source": "caf\xe9"}')
    with pytest.raises(RulesetError, match=r"units.json: table 'units': not UTF-8 text: byte "
                                           r"0xe9 at offset 15"):
        load_ruleset(tmp_path)


def test_symlink_loop_is_an_error_not_skipped(tmp_path):
    os.symlink("units.json", tmp_path / "units.json")
    with pytest.raises(RulesetError, match=r"units.json: table 'units': symbolic link loop"):
        load_ruleset(tmp_path)


def test_broken_symlink_and_folder_are_errors(tmp_path):
    os.symlink("nowhere.json", tmp_path / "market.json")
    with pytest.raises(RulesetError, match=r"market.json: table 'market': broken symbolic link"):
        load_ruleset(tmp_path)
    os.remove(tmp_path / "market.json")
    (tmp_path / "market.json").mkdir()
    with pytest.raises(RulesetError, match=r"market.json: table 'market': a directory"):
        load_ruleset(tmp_path)


def test_override_path_that_is_a_link_loop(tmp_path):
    os.symlink("o.json", tmp_path / "o.json")
    with pytest.raises(RulesetError, match=r"o.json: broken symbolic link or symbolic link loop"):
        load_ruleset(tmp_path / "o.json")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    (tmp_path / "units.json").write_text("{}")
    os.chmod(tmp_path / "units.json", 0)
    with pytest.raises(RulesetError, match=r"units.json: table 'units': cannot read file"):
        load_ruleset(tmp_path)


def test_automa_files_read_safely(tmp_path):
    (tmp_path / "automa.json").write_bytes(b"\xff\xfe")
    with pytest.raises(AutomaDataError, match=r"automa.json: not UTF-8 text"):
        load_automa(str(tmp_path))
    (tmp_path / "automa.json").unlink()
    os.symlink("automa_cards.csv", tmp_path / "automa_cards.csv")
    with pytest.raises(AutomaDataError, match=r"automa_cards.csv: symbolic link loop"):
        load_automa(str(tmp_path))


@pytest.mark.parametrize("over", [
    {"units": {"sheep": {"cost": 2 ** 31}}},
    '{"setup": {"note": ' + "[" * 50_000 + "]" * 50_000 + "}}",
])
def test_cli_reports_one_line_and_exit_2(tmp_path, capsys, over):
    path = _override(tmp_path, over)
    assert cli_main(["demo", "--ruleset", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(path) in err and "Traceback" not in err


# ---------------------------------------------------------------------------
# safe_io itself
# ---------------------------------------------------------------------------
def test_parse_json_limits():
    assert parse_json(b'\xef\xbb\xbf{"a": [1]}') == {"a": [1]}       # UTF-8 with a BOM
    assert parse_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    with pytest.raises(InputError, match="nested deeper than 3 levels"):
        parse_json("[[[[]]]]", max_depth=3)
    with pytest.raises(InputError, match="malformed JSON at line 1, column 2"):
        parse_json("{")
    assert check_depth({"a": {"b": 1}}, 2) == {"a": {"b": 1}}
    with pytest.raises(InputError):
        check_depth({"a": {"b": []}}, 2)


def test_decode_and_read_errors(tmp_path):
    with pytest.raises(InputError, match="byte 0x80 at offset 1"):
        decode_utf8(b"a\x80")
    with pytest.raises(InputError, match="missing file"):
        read_text(tmp_path / "none")
    (tmp_path / "big.json").write_bytes(b" " * 101)
    assert read_bytes(tmp_path / "big.json", max_bytes=101) == b" " * 101
    with pytest.raises(InputError, match="larger than 100 bytes"):
        read_bytes(tmp_path / "big.json", max_bytes=100)
    with pytest.raises(InputError, match="not a regular file"):
        read_bytes("/dev/zero")


def test_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "units.json")
    with pytest.raises(RulesetError, match=r"units.json: table 'units': not a regular file"):
        load_ruleset(tmp_path)
