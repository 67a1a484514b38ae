"""``caledonia serve`` says at startup, on a terminal, that the first game compiles the engine."""
import io

import pytest

from caledonia_env.web import cli


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("stream, cached, shown", [
    (Terminal(), False, True), (Terminal(), True, False), (io.StringIO(), False, False)])
def test_the_startup_note_shows_on_a_terminal_when_nothing_is_compiled(monkeypatch, stream,
                                                                        cached, shown):
    monkeypatch.setattr(cli, "engine_cached", lambda: cached)
    cli._first_run_note(stream)
    text = stream.getvalue()
    assert ("the first game compiles it, once, about" in text) is shown
    assert shown or text == ""
