"""``caledonia balance``: clan against clan on a balanced schedule or the draft, its
``--perturb`` ensemble, and the studies on arms (``--compare``, several ``--agent`` names,
``--until resolved``); ``--report DIR`` writes the study's report folder
(:mod:`caledonia_env.tournament.report`)."""

import contextlib
import os
import shlex
import sys
import tempfile
import time

from caledonia_env import scale
from caledonia_env import tournament as tn
from caledonia_env.config import CLAN_NAMES, check_player_count
from caledonia_env.data import RulesetError, load_ruleset
from caledonia_env.data.ranges import check_ranges, load_ranges
from caledonia_env.tournament.perturb import (OtherDraw, describe_drawn, ensemble_balance,
                                              ensemble_figure, ensemble_summary,
                                              format_ensemble, study_setup,
                                              write_ensemble_csv)
from caledonia_env.tournament.arms import (ArmFiles, Design, Until, agents_figure,
                                           format_summary, make_arms, run_arms, summarize,
                                           write_rows)
from caledonia_env.tournament.compare import (paired_figure, parse_change, ruleset_file,
                                              same_rules, write_tables)
from caledonia_env.cli.common import UsageError, check_output_path, game_config, locked_output
from caledonia_env.cli.games import play_spec_games, warm_up


def _automa_levels(text, num_players: int) -> tuple[int, ...]:
    """--automa LEVEL[,LEVEL]: one Automa seat per level (1-5), at least one other seat."""
    if not text:
        return ()
    try:
        levels = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"--automa takes levels 1-5, comma separated, e.g. --automa 5 or "
                         f"--automa 3,4; got {text!r}") from None
    if any(not 1 <= lv <= 5 for lv in levels):
        raise UsageError(f"--automa levels are 1-5 (A-1.1), got {text!r}")
    if len(levels) >= num_players:
        raise UsageError(f"--automa {text} leaves no seat for the clans in a "
                         f"{num_players}-player game (at most {num_players - 1} Automa seats)")
    return levels


#: The default agent of ``caledonia balance``: ``qpolicy``, the learned policy over the
#: evaluation tuned for the game's player count (agents/pretrained/qpolicy_Np.md), the
#: strongest agent that plays 4,000 4-player games in minutes on 2 cores (the cheapest search
#: that beats it, ``vmcts:2``, would take hours; docs/agents.md); ``--agent greedy:Np`` plays
#: the tuned evaluation alone.
DEFAULT_AGENT = "qpolicy"


def _balance_agents(args) -> list[str]:
    """--agent NAME[,NAME...]: one or more different agent names."""
    if args.agent is None:
        args.agent = DEFAULT_AGENT
    names = [a.strip() for a in args.agent.split(",")]
    if any(not a for a in names):
        raise UsageError(f"--agent: empty agent name in {args.agent!r} (commas between "
                         f"names, e.g. --agent greedy:4p,qpolicy)")
    if len(set(names)) != len(names):
        raise UsageError(f"--agent: each agent once, got {args.agent!r}")
    return names


def _until_options(args) -> None:
    """--until and its options (--confidence, --max-games, --batch) go together; --games is
    the fixed count of a study without --until (default 2000)."""
    if args.until:
        if args.games is not None:
            raise UsageError("--until resolved plays until every verdict is resolved; its cap "
                             "is --max-games N, not --games")
        for opt, v in (("--max-games", args.max_games), ("--batch", args.batch)):
            if v is not None and v < 1:
                raise UsageError(f"{opt} must be a positive number of games, got {v}")
        if args.confidence is not None and not 0 < args.confidence < 1:
            raise UsageError(f"--confidence is a level between 0 and 1, e.g. 0.95; got "
                             f"{args.confidence:g}")
    else:
        given = [o for o, v in (("--confidence", args.confidence), ("--max-games",
                 args.max_games), ("--batch", args.batch)) if v is not None]
        if given:
            raise UsageError(f"{', '.join(given)} go with --until resolved (the fixed study "
                             f"of --games reports 95% intervals)")
        args.games = 2000 if args.games is None else args.games
    if not 0 < args.margin < 100:
        raise UsageError(f"--margin is in percentage points, between 0 and 100, got "
                         f"{args.margin:g}")


def cmd_balance(args) -> int:
    """``caledonia balance``: clan against clan; table, head to head, plot, rows to --out."""
    agents = _balance_agents(args)
    _until_options(args)
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    try:
        check_player_count(args.players, what="--players", solo_flag=None)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.clans:
        clans = [c.strip().lower() for c in args.clans.split(",") if c.strip()]
        bad = [c for c in clans if c not in CLAN_NAMES]
        if bad:
            raise UsageError(f"unknown clan(s) {', '.join(bad)}; allowed: {', '.join(CLAN_NAMES)}")
    else:
        clans = [c for c in CLAN_NAMES if c != "brewer"]
    automa = _automa_levels(args.automa, args.players)
    humans = args.players - len(automa)
    drafted = args.design == "drafted"
    if drafted and args.clans:
        raise UsageError("--design drafted plays the standard draft of the eight base clans "
                         "(R-1.7); --clans is for --design assigned")
    players = (agents[0],) * humans + tuple(f"automa:{lv}" for lv in automa)
    games = _max_games(args) if args.until else args.games
    if drafted:                                 # the agents draft, R-1.6 first player
        schedule = None
        spec = tn.TournamentSpec(players=players, games=games, seed=args.seed,
                                 config=game_config(args, args.players, clans=False))
    else:
        try:
            schedule = tn.balance_schedule(clans, humans, seed=args.seed)
        except ValueError as e:
            raise UsageError(str(e)) from None
        if automa:                              # Automa seats take no clan
            schedule = tuple(tuple(c) + (None,) * len(automa) for c in schedule)
        spec = tn.TournamentSpec(players=players, games=games, seed=args.seed,
                                 config=game_config(args, args.players, clans=False,
                                                    first_player=0),
                                 clan_schedule=schedule)
    try:
        tn.validate(spec)
    except ValueError as e:
        raise UsageError(str(e)) from None
    for path, what in ((args.out, "--out"), (args.plot, "--plot")):
        if path:
            check_output_path(path, what)
    if args.report:
        check_output_path(args.report, "--report", folder=True)
    with locked_output(args.out), locked_output(args.report, "--report", folder=True):
        if args.compare or len(agents) > 1 or args.until:
            return _balance_arms(args, spec, agents, humans, automa, schedule)
        return _balance(args, spec, automa, humans, players, drafted, schedule)


def command_line(args) -> str:
    """The command as typed (``caledonia`` and its arguments), for a report."""
    return shlex.join(["caledonia"] + list(getattr(args, "argv", None) or sys.argv[1:]))


def _study_metadata(args, spec, who: str, rules: str) -> dict:
    """What a balance report says the study held: agent, players, seeds, map, ``rules``
    (:func:`tournament.describe_rules`)."""
    return {"agent": who, "players": str(args.players),
            "seeds": f"tournament seed {args.seed}: game g is set up (map, tiles, agents' "
                     f"seeds) from (seed, g), whatever the workers",
            "map": ",".join(spec.template.map) if spec.template.map
            else "drawn per game from its seed",
            "rules": rules.removeprefix("rules: ")}


def _write_report(args, summary) -> None:
    """Write ``summary`` to --report and say so."""
    tn.write_report(summary, args.report)
    print(f"report written to {args.report} ({', '.join(tn.REPORT_FILES)})")


def _balance(args, spec, automa, humans, players, drafted, schedule) -> int:
    """``caledonia balance`` once its --out and --report are locked."""
    who = (f"every player {args.agent}" if not automa else
           f"{humans} x {args.agent} with a clan against {', '.join(players[humans:])}")
    if args.perturb or args.ranges:
        return _balance_ensemble(args, spec, who)
    rows, wall = play_spec_games(args, spec)
    # the Automa seats (no clan) appear under their name, e.g. automa:5
    table_rows = [dict(r, clan=r["agent"]) if r["agent"].startswith("automa:") else r
                  for r in rows]
    stats = tn.group_stats(table_rows, "clan")
    names, ahead, meet = tn.head_to_head(table_rows)
    print(tn.format_table(stats, "clan", f"win rate by clan ({args.players} players, {who}; "
                                         f"par {100 / args.players:.1f}%)"))
    print()
    print(tn.format_head_to_head(names, ahead, meet))
    counts = [s["n"] for s in stats if not str(s["clan"]).startswith("automa:")]
    if drafted:
        print(f"\n{spec.games} games with the clans drafted by the players (R-1.7, first "
              f"player drawn per game); draft share (games with the clan / games): "
              + ", ".join(f"{s['clan']} {100 * s['n'] / spec.games:.0f}%" for s in stats
                          if not str(s["clan"]).startswith("automa:"))
              + f"; wall time {wall:.1f} s")
    else:
        combos = len(schedule) // humans
        print(f"\n{spec.games} games of a balanced schedule ({combos} clan combinations x "
              f"{humans} seat rotations, player 0 first, blocks in a seeded order); games "
              f"per clan {min(counts)}-{max(counts)}; wall time {wall:.1f} s")
    print(tn.describe_rules(rows))
    if args.out:
        print(f"{len(rows)} rows written to {args.out}")
    title = (f"Clan balance: {spec.games} games, {args.players} players, "
             f"{'all ' + args.agent if not automa else who}{', clans drafted' if drafted else ''}")
    fig = (tn.balance_figure(stats, names, ahead, meet, args.players,
                             f"{title}\n{tn.describe_rules(rows)}")
           if args.plot or args.report else None)
    if args.plot:
        tn.save_figure(fig, args.plot)
        print(f"plot written to {args.plot}")
    if args.report:
        design = ("clans drafted by the agents (R-1.7), first player drawn per game" if drafted
                  else f"assigned: a balanced schedule of {len(schedule) // humans} clan "
                       f"combinations x {humans} seat rotations, player 0 first")
        meta = dict(_study_metadata(args, spec, who, tn.describe_rules(rows)), design=design)
        _write_report(args, tn.balance_study(
            table_rows, players=args.players, title=title, command=command_line(args),
            metadata=meta, drafted=drafted,
            figures=[("Win rate by clan with its 95% interval (par dashed) and the head-to-head "
                      "matrix", tn.figure_png(fig))]))
    return 0


MAX_GAMES = 20000                # --until resolved: the default cap, games per arm
DRAFTED_BATCH = 200              # --until resolved, --design drafted: the default batch


def _max_games(args) -> int:
    return MAX_GAMES if args.max_games is None else args.max_games


def arms_folder(out: str) -> str:
    """Where ``caledonia balance --out FILE.csv`` with --compare or several agents keeps
    each arm's games (``0-greedy-A.csv``, ...; streamed, what --resume finishes from) and
    B's ruleset (``ruleset_B.json``): the folder ``FILE.csv.arms`` beside it."""
    return out + ".arms"


def _balance_arms(args, spec, agents, humans, automa, schedule) -> int:
    """``caledonia balance`` with --compare, several agents or --until resolved: the arms
    (agent x ruleset side) of :mod:`caledonia_env.tournament.arms` on common games, each
    streamed to its file (--out itself for one arm, else :func:`arms_folder`)."""
    if args.perturb or args.ranges:
        raise UsageError("--perturb and --ranges draw rulesets of their own: they do not "
                         "combine with --compare, several --agent names or --until")
    try:
        change = parse_change(args.compare, spec.template.ruleset) if args.compare else None
    except ValueError as e:
        raise UsageError(f"--compare {e}") from None
    until = None if not args.until else Until(
        confidence=0.95 if args.confidence is None else args.confidence,
        batch=args.batch or (len(schedule) if schedule else DRAFTED_BATCH),
        max_games=_max_games(args))
    out, single = args.out or None, change is None and len(agents) == 1
    if (args.backend == "ray" or args.resume) and not out:
        raise UsageError("--backend ray and --resume need --out FILE.csv (each arm's games "
                         "are streamed beside it as they finish)")
    if out and not single and not out.endswith(".csv"):
        raise UsageError(f"--out {out}: --compare and several agents write one CSV with "
                         f"every arm's rows: give FILE.csv")
    folder = arms_folder(out) if out and not single else None
    if folder:
        check_output_path(folder, "--out's arms folder", folder=True)
        os.makedirs(folder, exist_ok=True)
    design = Design(args.players, drafted=schedule is None, margin=args.margin / 100)
    t0 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        work = folder or (None if single and out else stack.enter_context(
            tempfile.TemporaryDirectory(prefix="caledonia-arms-")))
        b_config = None if change is None else change.config(
            spec.template, None if change.tables is None
            else write_tables(change.tables, ruleset_file(work)))
        arms = make_arms(spec, agents, humans, b_config)
        for arm in arms[::2 if change else 1]:
            try:
                tn.validate(arm.spec)
            except ValueError as e:
                raise UsageError(str(e)) from None
            if args.backend != "ray":
                warm_up(arm.spec, getattr(args, "compile_progress", None))
        paths = [out] if single and out else [os.path.join(work, a.file_name(k))
                                                for k, a in enumerate(arms)]
        total = (until.max_games if until else spec.games) * len(arms)
        try:
            with tn.progress_bar(total, quiet=args.quiet) as bar, \
                    ArmFiles(paths, args.backend, args.workers, args.address,
                             args.connect_timeout, args.resume, bar.update) as files:
                played = run_arms(arms, files, design, None if until else spec.games, until)
        except (ValueError, ImportError) as e:     # ClusterUnreachable is a ValueError
            raise UsageError(str(e)) from None
        same = change is not None and same_rules(spec.template, b_config)
        gone = work if work != folder else None      # a temporary folder, deleted below
    who = ("every player {agent}" if not automa else
           f"{humans} x {{agent}} with a clan against {', '.join(spec.players[humans:])}")
    summary = summarize(arms, played, design, change.describe() if change else None, until)
    print(format_summary(summary, who))
    if same:
        print("note: B plays the same rules as A (the same ruleset numbers and variants): "
              "every paired difference is 0, a check of the common random numbers")
    def rules(rows):                               # B's ruleset file may be gone
        text = tn.describe_rules(rows)
        return text if not gone else text.replace(ruleset_file(gone), "A's, changed by --compare")
    for arm, rows in zip(arms, played.rows):
        if arm.agent == agents[0]:
            print(("A " if arm.side == "A" else "B " if arm.side else "") + rules(rows))
    print(f"wall time {time.perf_counter() - t0:.1f} s for {summary.games_played} games "
          f"({len(arms)} arm{'s' * (len(arms) > 1)} x {played.games})")
    if args.resume:
        print(f"--resume: {files.kept} games already in {folder or out}, "
              f"{summary.games_played - files.kept} played now")
    if out and not single:
        n = write_rows(arms, played.rows, out)
        print(f"{n} rows (one per player, game and arm{', column side = A or B' * bool(change)}) "
              f"written to {out}; each arm's games in {folder}")
    elif out:
        print(f"{len(played.rows[0])} rows written to {out}")
    if args.plot or args.report:
        title = (f"{', '.join(agents)}: {args.players} players, {played.games} games per arm"
                 + (f"\nB = {summary.compare}" if change else ""))
        fig = (paired_figure(summary.tables["paired"], design.margin, title) if change
               else agents_figure(summary, title))
        if args.plot:
            tn.save_figure(fig, args.plot)
            print(f"plot written to {args.plot}")
        if args.report:
            design_text = ("clans drafted by the agents (R-1.7), first player drawn per game"
                           if schedule is None else
                           f"assigned: a balanced schedule of {len(schedule) // humans} clan "
                           f"combinations x {humans} seat rotations, player 0 first")
            meta = dict(_study_metadata(args, spec, who.format(agent=", ".join(agents)),
                                        rules(played.rows[0])), design=design_text)
            if change:
                meta["B's rules"] = rules(played.rows[1]).removeprefix("rules: ")
                meta["held fixed"] = ("each game's seed, map, clans, seats and agents' "
                                      "randomness are the same under A and B (common random "
                                      "numbers); only the rules differ")
            caption = ("Each clan's win share B - A with its paired 95% interval and the "
                       "indifference margin" if change else
                       "Win rate by clan with its 95% interval, one colour per agent (par dashed)")
            _write_report(args, tn.arms_study(
                summary, title=title.replace("\n", "; "), command=command_line(args),
                metadata=meta, figures=[(caption, tn.figure_png(fig))]))
    return 0


def draws_folder(out: str) -> str:
    """Where ``caledonia balance --perturb N --out FILE.csv`` keeps each draw's ruleset
    (``ruleset_draw_0000.json``, ...) and game rows (``draw_0000.csv``, ...): the folder
    ``FILE.csv.draws`` beside it, which ``--resume`` finishes from."""
    return out + ".draws"


def _balance_ensemble(args, spec, who: str) -> int:
    """``caledonia balance --perturb N``: the same balance study under N rulesets whose
    estimates are drawn from their plausible ranges; per-clan spread, CSV, plot. With --out,
    every draw's games are streamed to :func:`draws_folder` as they finish, so an
    interrupted study (a search in every seat takes hours) resumes with --resume: finished
    draws are read back, a cut draw plays only its missing games."""
    if args.perturb < 1:
        raise UsageError(f"--perturb must be >= 1 (rulesets to draw), got {args.perturb}")
    if args.backend == "ray" or (args.out or "").endswith(".parquet"):
        raise UsageError("--perturb plays locally and writes one CSV row per (draw, clan): "
                         "drop --backend ray and give --out FILE.csv")
    if args.resume and not args.out:
        raise UsageError("--perturb --resume needs the --out FILE.csv of the study to finish "
                         "(its games are in FILE.csv.draws/)")
    try:
        ranges = load_ranges(args.ranges)
    except RulesetError as e:
        raise UsageError(str(e)) from None
    base = load_ruleset(spec.template.ruleset)
    bad = [b for b in check_ranges(base, ranges) if not b.endswith(": no plausible range")]
    if bad:
        raise UsageError(f"--ranges {args.ranges or 'bundled'}: {bad[0]}")
    try:
        setup = study_setup(spec.template, ranges)
    except ValueError as e:
        raise UsageError(f"--ranges {args.ranges or 'bundled'}: {e}") from None
    draws = draws_folder(args.out) if args.out else None
    if draws:
        check_output_path(draws, "--out's draws folder", folder=True)
        os.makedirs(draws, exist_ok=True)
    t0 = time.perf_counter()
    with (contextlib.nullcontext(draws) if draws
          else tempfile.TemporaryDirectory(prefix="caledonia-perturb-")) as folder, \
            tn.progress_bar(spec.games * args.perturb, quiet=args.quiet) as bar:
        play = _DrawFiles(args, folder, bar) if draws else None
        try:
            rows = ensemble_balance(spec, args.perturb, ranges, folder, seed=args.seed,
                                    workers=args.workers, progress=bar.update, play=play,
                                    resume=args.resume)
        except OtherDraw as e:
            raise UsageError(f"--resume: {e}") from None
    if args.resume:
        print(f"--resume: {play.kept} games already in {draws}, "
              f"{spec.games * args.perturb - play.kept} played now")
    summary = ensemble_summary(rows, par=1 / args.players)
    print(format_ensemble(summary, f"win share by clan across {args.perturb} drawn rulesets "
                                   f"({args.players} players, {who}; par "
                                   f"{100 / args.players:.1f}%)"))
    print(f"\n{spec.games} games per draw (the same games in every draw); drawn from "
          f"{args.ranges or 'the bundled ranges'} with seed {args.seed}: "
          f"{describe_drawn(base, ranges, setup)}; first / last = share of draws where the "
          f"clan ranks first / last by win rate, above par = where it wins more than "
          f"{100 / args.players:.1f}% of its games; wall time "
          f"{time.perf_counter() - t0:.1f} s")
    print(f"held fixed: {rows[0]['held_fixed']}")
    if args.out:
        write_ensemble_csv(rows, args.out)
        print(f"{len(rows)} rows (one per draw and clan) written to {args.out}; each "
              f"draw's ruleset and games in {draws}")
    title = (f"Clan balance across {args.perturb} drawn rulesets: {spec.games} games each, "
             f"{args.players} players, {who}")
    fig = ensemble_figure(rows, args.players, title) if args.plot or args.report else None
    if args.plot:
        tn.save_figure(fig, args.plot)
        print(f"plot written to {args.plot}")
    if args.report:
        rules = tn.describe_rules([tn.rule_fields(spec.game_config(0), base)])
        meta = _study_metadata(args, spec, who, rules)
        if setup.draw_map:
            meta["map"] = "one of the 16 configurations per draw (the table of draws)"
        meta.update({"games per draw": str(spec.games),
                     "base ruleset fingerprint": base.fingerprint(),
                     "ranges": args.ranges or "the bundled caledonia_env/data/estimate_ranges.json",
                     "drawn": describe_drawn(base, ranges, setup).split("; "),
                     "held fixed": rows[0]["held_fixed"].split("; ")})
        _write_report(args, tn.ensemble_study(
            rows, summary, players=args.players, title=title, command=command_line(args),
            metadata=meta, figures=[("Each clan's win share in every draw (dots), its mean "
                                     "and 5-95% range; par dashed", tn.figure_png(fig))]))
    return 0


class _DrawFiles:
    """``play(spec, draw)`` for :func:`ensemble_balance`: the draw's games streamed to
    ``folder/draw_0000.csv`` (``scale.run_study``; with --resume only the games missing
    from that file are played, after the check that it holds this draw's study);
    ``kept`` counts the games found already played."""

    def __init__(self, args, folder: str, bar):
        self.args, self.folder, self.bar = args, folder, bar
        self.kept = 0

    def __call__(self, drawn_spec, draw: int) -> list[dict]:
        out = os.path.join(self.folder, f"draw_{draw:04d}.csv")
        resume = self.args.resume
        try:
            summary = scale.run_study(drawn_spec, out, backend="local",
                                      workers=self.args.workers, resume=resume,
                                      progress=self.bar.update)
        except ValueError as e:
            raise UsageError(f"--resume, draw {draw}: {e}" if resume else str(e)) from None
        self.bar.update(summary["skipped"])
        self.kept += summary["skipped"]
        return scale.read_rows(out)
