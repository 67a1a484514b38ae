"""Many games between bots, in parallel processes, with win rates and score breakdowns.

Game ``g`` of a tournament with seed ``S`` is fully determined by ``(S, g)``:
its GameConfig seed and every agent's seed come from
``numpy.random.SeedSequence([S, g])``, so results do not depend on the number
of worker processes or on the order in which games finish.

One job per module; the names below are importable from here:
``variants`` (rule variants by name, the CSV rule columns), ``options`` (the rules options
of the commands, read into one GameConfig), ``spec`` (TournamentSpec: a GameConfig template,
seeds, the balanced clan schedule), ``games`` (one game and its CSV rows), ``runner`` (the
process pool), ``output`` (output path checks, CSV writing), ``stats`` (win rates, tables,
head to head), ``figures`` (plots), ``report`` (a study's report folder: HTML, Markdown,
JSON). The balance study's what-if and sequential machinery is imported from its modules:
``compare`` (the paired B - A of ``--compare``), ``sequential`` (anytime-valid confidence
sequences), ``arms`` (agents x ruleset sides on common games).
"""
from caledonia_env.tournament.figures import balance_figure, figure_png, save_figure
from caledonia_env.tournament.games import CSV_FIELDS, SCORE_FIELDS, play_game, result_rows, warm_agent
from caledonia_env.tournament.options import (add_rules_options, config_from_args, parse_clans,
                                              rules_options)
from caledonia_env.tournament.output import (OutputBusy, check_output_file, check_output_folder,
                                             lock_output, write_csv, write_text)
from caledonia_env.tournament.report import (REPORT_FILES, StudySummary, arms_study,
                                             balance_study, ensemble_study, write_report)
from caledonia_env.tournament.runner import pool_context, progress_bar, run
from caledonia_env.tournament.spec import TournamentSpec, balance_schedule, game_seeds, validate
from caledonia_env.tournament.stats import (clan_title, describe_rules, format_head_to_head,
                                            format_results, format_solo, format_table,
                                            group_stats, head_to_head, solo_summary, wilson)
from caledonia_env.tournament.variants import RULE_FIELDS, VARIANTS, rule_fields, variant_options

__all__ = [
    "CSV_FIELDS", "OutputBusy", "REPORT_FILES", "RULE_FIELDS", "SCORE_FIELDS", "StudySummary",
    "VARIANTS", "TournamentSpec", "add_rules_options", "arms_study", "balance_figure",
    "balance_schedule",
    "balance_study", "check_output_file", "check_output_folder", "clan_title",
    "config_from_args", "describe_rules", "ensemble_study", "figure_png", "format_head_to_head",
    "format_results", "format_solo", "format_table", "game_seeds", "group_stats", "head_to_head", "lock_output", "parse_clans", "play_game",
    "pool_context", "progress_bar", "result_rows", "rule_fields", "rules_options",
    "run", "save_figure", "solo_summary", "validate", "variant_options", "warm_agent",
    "wilson", "write_csv", "write_report", "write_text",
]
