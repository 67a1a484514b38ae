"""Rule variants by name (``--variant``, R-9.3) and the CSV columns naming the rules a
game was played under."""
from __future__ import annotations

from caledonia_env.config import GameConfig
from caledonia_env.data import load_ruleset

RULE_FIELDS = ("clan_mode", "variants", "ruleset", "ruleset_fingerprint")

# Rule variants by name (CLI --variant) -> the GameConfig option that switches them on.
VARIANTS = {
    "static-imports": ("variant_static_imports", True),
    "no-scoring-tiles": ("scoring_tiles", False),
    "no-ports": ("ports", False),
    "smaller-map": ("smaller_map", True),
    "kickstarter-tiles": ("kickstarter_tiles", True),
    "kickstarter-clan": ("kickstarter_clan", True),
    # the readings the publisher's erratum and FAQ replaced (docs/interpretations.md)
    "first-edition-swap": ("interp_swap_bonuses", "first-edition"),   # P7
    "fixed-solo-imports": ("interp_solo_imports", "fixed"),
    # the engine's readings before they followed the text (docs/interpretations.md)
    "any-second-contract": ("interp_buchanan", "any-second"),
    "left-pays-cellar": ("interp_cellar", "left-pays"),
    "capped-import-rarity": ("interp_import_rarity", "capped"),
}


def variant_options(names) -> dict:
    """GameConfig options of variant names (a list or a comma-separated string)."""
    if isinstance(names, str):
        names = names.split(",")
    out = {}
    for name in names or ():
        key = name.strip().lower()
        if key not in VARIANTS:
            raise ValueError(f"unknown variant {name.strip()!r}; variants: {', '.join(VARIANTS)}")
        field_name, value = VARIANTS[key]
        out[field_name] = value
    return out


def rule_fields(config: GameConfig, ruleset=None) -> dict:
    """The CSV columns saying under which rules a game was played: clan mode, variant
    names joined by '+' ('' = none), ruleset path ('bundled') and its fingerprint
    (``ruleset``: the loaded Ruleset, if at hand)."""
    on = [k for k, (f, v) in VARIANTS.items() if getattr(config, f) == v]
    if config.solo:
        on.insert(0, "solo")
    return {"clan_mode": config.clan_mode, "variants": "+".join(on),
            "ruleset": config.ruleset or "bundled",
            "ruleset_fingerprint": (ruleset or load_ruleset(config.ruleset)).fingerprint()}
