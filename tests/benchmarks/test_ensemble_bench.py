"""benchmarks/ensemble.py: the balance-under-uncertainty table summarises an ensemble
study's rows (mean and spread over the draws, first / last / above par shares) and carries
what the draws held fixed."""
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import ensemble  # noqa: E402

sys.path.pop(0)


def test_shares_over_the_draws_and_the_held_fixed_text(tmp_path, capsys):
    path = tmp_path / "ens.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, ["draw", "clan", "win_rate", "rank", "held_fixed"])
        w.writeheader()
        for draw, (a, b) in enumerate([(0.7, 0.3), (0.4, 0.6)]):
            w.writerow({"draw": draw, "clan": "mackenzie", "win_rate": a,
                        "rank": 1 if a > b else 2, "held_fixed": "contracts (community)"})
            w.writerow({"draw": draw, "clan": "stewart", "win_rate": b,
                        "rank": 1 if b > a else 2, "held_fixed": "contracts (community)"})
    draws, rows, held = ensemble.summarise(path)
    assert draws == 2 and held == "contracts (community)"
    mac = next(r for r in rows if r["clan"] == "MacKenzie")
    assert mac["mean"] == 55.0 and mac["first"] == 50 and mac["last"] == 50
    assert mac["spread"][0] < 55.0 < mac["spread"][1]
    assert ensemble.main([str(path), "--players", "2"]) == 0
    out = capsys.readouterr().out
    assert "held fixed: contracts (community)" in out and "MacKenzie" in out
