"""The rules options shared by the commands that play games (--clans, --auction, --solo,
--variant, --ruleset) and their reading, with --map, into one GameConfig."""
from __future__ import annotations

from caledonia_env.config import CLAN_CHOICES, CLAN_NAMES, GameConfig, clan_options
from caledonia_env.data import bundled_rulesets, load_ruleset
from caledonia_env.engine.tables.build import check_engine_support
from caledonia_env.tournament.variants import VARIANTS, variant_options


def add_rules_options(p, clans: bool = True, auction: bool = True, solo: bool = True) -> None:
    """--clans, --auction, --solo, --variant, --ruleset (recorded in every output)."""
    g = p.add_argument_group("rules (recorded in the CSV columns clan_mode, variants, "
                             "ruleset, ruleset_fingerprint and in game records)")
    if clans:
        g.add_argument("--clans", default="draft", metavar="MODE|C1,C2,...",
                       help="'draft' (default: the standard game, R-1.7), 'none' (no-clans "
                            "variant, R-1.9), 'auction' (R-9.4), or one different clan per "
                            "player, e.g. --clans stewart,campbell,none; clans: "
                            + ", ".join(CLAN_NAMES))
    if auction:
        g.add_argument("--auction", action="store_true",
                       help="auction the clans instead of drafting them (R-9.4); the same as "
                            "--clans auction")
    if solo:
        g.add_argument("--solo", action="store_true",
                       help="the solo game (R-9.2): one player against the solo rules")
    g.add_argument("--variant", default=None, metavar="NAME[,NAME]",
                   help="rule variants, comma separated: " + ", ".join(VARIANTS)
                        + " (e.g. --variant no-ports,static-imports)")
    g.add_argument("--ruleset", default=None, metavar="PATH|NAME",
                   help="a ruleset folder or .json file of overrides of the bundled numbers, "
                        "or a bundled ruleset name (" + ", ".join(bundled_rulesets())
                        + "; docs/ruleset.md), e.g. --ruleset estimates-2026-11")


def config_from_args(args, num_players: int, clans: bool = True, **fixed) -> GameConfig:
    """The GameConfig of the options of :func:`add_rules_options` and ``--map`` (when the
    command has it), with ``fixed`` further fields (``seed``, ``first_player``, ...): what
    a command plays, or the template a :class:`~caledonia_env.tournament.TournamentSpec`
    replaces the seed (and the clans of a schedule) of per game. ``clans=False``: --clans
    means something else here and is not read. ValueError naming the option if invalid."""
    return GameConfig(num_players=num_players, map=getattr(args, "map", None),
                      **rules_options(args, num_players, clans), **fixed)


def rules_options(args, num_players: int, clans: bool = True) -> dict:
    """The GameConfig fields the rules options set (clans, solo, variants, ruleset), as
    keywords: what :func:`config_from_args` builds on, and what a training run saves in
    its config.json (``TrainConfig.game``). ValueError naming the option if invalid."""
    kw = {}
    choice = getattr(args, "clans", None) if clans else None
    if choice is not None:
        choice = parse_clans(choice, num_players)
    if getattr(args, "auction", False):
        if choice not in ("draft", "auction"):
            raise ValueError(f"--auction auctions drawn clans (R-9.4); it cannot be combined "
                             f"with --clans {args.clans}")
        choice = "auction"
    if choice is not None:
        kw.update(clan_options(choice))
    if getattr(args, "solo", False):
        kw["solo"] = True
    try:
        kw.update(variant_options(getattr(args, "variant", None) or ()))
    except ValueError as e:
        raise ValueError(f"--variant: {e}") from None
    if getattr(args, "ruleset", None):
        try:
            check_engine_support(load_ruleset(args.ruleset))   # values the engine can hold
        except (ValueError, OSError) as e:
            raise ValueError(f"--ruleset: {e}") from None
        kw["ruleset"] = args.ruleset
    return kw


def parse_clans(text: str, num_players: int):
    """'none', 'draft', 'auction' or one different clan name per player (comma separated)."""
    t = text.strip().lower()
    if t in CLAN_CHOICES:
        return t
    names = tuple(c.strip().lower() for c in text.split(","))
    if len(names) != num_players:
        raise ValueError(f"--clans: give 'none', 'draft', 'auction' or one clan per player "
                         f"({num_players}, comma separated, 'none' for no clan) from "
                         f"{', '.join(CLAN_NAMES)}; got {len(names)}: {text!r}")
    bad = [c for c in names if c not in CLAN_NAMES and c != "none"]
    if bad:
        raise ValueError(f"--clans: unknown clan(s) {', '.join(bad)}; allowed: "
                         f"{', '.join(CLAN_NAMES)} or none")
    named = [c for c in names if c != "none"]
    if len(set(named)) != len(named):
        raise ValueError(f"--clans: clans must be different (each clan tile exists once), "
                         f"got {text!r}")
    return names
