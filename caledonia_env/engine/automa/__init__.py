"""The publisher's Automa seats (A-0 … A-10): deck, turns, Expand, event log, phases."""
