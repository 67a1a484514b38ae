"""The static int32 table of one (ruleset, map, player count, variants), built for the engine."""
