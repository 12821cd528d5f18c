"""`tablelog record`, the recording shell, driven as a recorder would: lines piped into
the command, and keys typed into prompt_toolkit (a pipe input, no screen) for completion,
the line kept after a refusal and the history of typed lines. Also `tablelog use`."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from tablelog.service.api.server import BackgroundServer
from tablelog.service.store.embedded import free_port
from tablelog_client import Client
from tablelog_client.shell import (
    COMMANDS,
    MAX_HISTORY_BYTES,
    MoveCompleter,
    MoveIndex,
    RecordingShell,
    _history_file,
    terminal_session,
)
from tests.cli.test_cli import new_game, tablelog
from tests.service.helpers import splendor_line
from tests.service.support import tablelog_command

pytestmark = pytest.mark.slow


def dealt_game(server: BackgroundServer) -> str:
    """A dealt Splendor game for Ann and Bob: the server turned up the layout, Ann moves."""
    return new_game(server, "--mode", "dealt")


def moves_of(client: Client, game_id: str) -> list[str]:
    return list(client.state(game_id).moves)


# ------------------------------------------------------------------ piped lines


def test_piped_lines_record_name_the_players_and_refuse_in_the_words_of_move(
    server: BackgroundServer, client: Client
) -> None:
    game_id = dealt_game(server)
    lines = [
        "take w u g",
        "take r r",
        "undo misheard",
        "redo",
        "note !? greedy",
        "show",
        "legal reserve 3",
        "history",
        "take w w",  # Ann: only 3 white left in the bank
        "take k k",  # after a refused line: never read
    ]
    done = tablelog(server, "record", game_id, stdin="\n".join(lines) + "\n", ok=False)
    assert done.returncode == 1  # a line was refused: a script notices
    said = done.stdout.splitlines()
    assert said[0].startswith(f"{game_id}  splendor  Ann, Bob  [dealt]")
    # Each line is echoed after a prompt naming who is to move, then answered.
    assert said[said.index("Ann> take w u g") + 1] == "1. Ann: take w u g  (revision 17)"
    assert said[said.index("Ann> take w u g") + 2] == "revision 17 · to move: Bob"
    assert said[said.index("Bob> take r r") + 1] == "2. Bob: take r r  (revision 18)"
    assert said[said.index("Ann> undo misheard") + 1] == (
        "undid 2. Bob's take r r (revision 18) (misheard)"
    )
    assert said[said.index("Bob> redo") + 1] == "redid 2. Bob's take r r (revision 18)"
    assert "Ann> take k k" not in said
    assert said[said.index("Ann> show") + 1] == "revision 20 · to move: Ann"
    legal = said[said.index("Ann> legal reserve 3") + 1 :]
    assert legal[0] == "to move: Ann; 5 legal moves starting 'reserve 3'"
    # Each face-up reserve with the card at its place (issue 26); the deck's is face down.
    assert [line.split("  (")[0] for line in legal[1:6]] == [
        f"  reserve 3.{slot}" for slot in ("1", "2", "3", "4", "deck")
    ]
    assert all(
        re.fullmatch(r"  reserve 3\.[1-4]  \(3[wugrk]\d:[wugrk0-9]+\)", x) for x in legal[1:5]
    )
    assert legal[5] == "  reserve 3.deck"
    history = said[said.index("Ann> history") + 1 : said.index("Ann> take w w")]
    assert history[-2:] == [
        "   1. Ann: take w u g  (revision 17)",
        "   2. Bob: take r r  (revision 18)",
    ]
    assert moves_of(client, game_id)[-2:] == ["take w u g", "take r r"]
    notes = client.annotations(game_id)
    assert [(n.revision, n.glyph, n.comment) for n in notes] == [(18, "!?", "greedy")]
    # The refusal reads as `tablelog move` says it (the game has not changed since).
    tablelog(server, "undo", game_id)
    by_move = tablelog(server, "move", game_id, "take w w", ok=False)
    assert "Take 2 needs at least 4 white tokens" in by_move.stderr
    assert by_move.stderr in done.stderr


def test_the_shell_and_move_share_what_the_terminal_saw(server: BackgroundServer) -> None:
    """A version seen in the shell is the one `tablelog move` sends next, and the game
    recorded in the shell becomes the current one."""
    game_id = dealt_game(server)
    tablelog(server, "record", game_id, stdin="take w u g\n")
    after = tablelog(server, "move", "take r r").stdout
    assert after.startswith("2. Bob: take r r  (revision 18)")


def test_a_game_moved_on_by_another_recorder_is_caught_up_by_name(
    server: BackgroundServer, client: Client
) -> None:
    game_id = dealt_game(server)
    recorder = client.add_member("bob-phone", "recorder")
    bob_phone = client.create_token(recorder.member_id).token
    out = io.StringIO()
    shell = RecordingShell(client, game_id, address=server.target, out=out)

    def typed() -> Iterator[str]:
        yield "take w u g"
        # Meanwhile, at the other end of the table, Bob's move is recorded on a phone.
        with Client(server.target, token=bob_phone) as other:
            other.record(game_id, "take k k")
        yield "take r r"  # this terminal still thinks Bob is to move
        # The kept line, sent again for the player now to move (from a pipe, read on
        # after a refusal only when it names its mover).
        yield f"Ann: {shell.kept}"

    assert shell.run_lines(typed(), keep_going=True) == 1
    said = out.getvalue().splitlines()
    stale = said.index("Bob> take r r")
    assert said[stale + 1] == "meanwhile bob-phone recorded: 2. Bob: take k k  (revision 18)"
    assert said[stale + 2] == "revision 18 · to move: Ann"
    assert "your line is kept: Enter records it on this game as it is now" in said
    assert said[said.index("Ann> Ann: take r r") + 1] == "3. Ann: take r r  (revision 19)"
    assert moves_of(client, game_id)[-3:] == ["take w u g", "take k k", "take r r"]


def test_a_setup_typed_elsewhere_is_caught_up_as_one_line_and_moves_by_number(
    server: BackgroundServer, client: Client
) -> None:
    """The shell's catch-up reads the game as `watch` and `replay` do: the setup's reveals
    typed on another device are one line, the players' moves numbered."""
    game_id = new_game(server)  # table mode: the layout is typed in
    line = splendor_line(seed=32)
    recorder = client.add_member("cleo-phone", "recorder")
    cleo_phone = client.create_token(recorder.member_id).token
    out = io.StringIO()
    shell = RecordingShell(client, game_id, address=server.target, out=out)

    def typed() -> Iterator[str]:
        with Client(server.target, token=cleo_phone) as other:
            for notation in line[:16]:  # the 15 reveals of the setup, then Ann's move
                other.record(game_id, notation)
        yield "reveal 1.1 1k0:w1u1g1r1"  # this terminal still thinks the table reveals

    shell.run_lines(typed())
    said = out.getvalue().splitlines()
    stale = said.index("table> reveal 1.1 1k0:w1u1g1r1")
    assert said[stale + 1 : stale + 3] == [
        "meanwhile cleo-phone recorded: setup: 15 table events  (revisions 2 to 16)",
        "meanwhile cleo-phone recorded: 1. Ann: reserve 1.2 (1u0:k3)  (revision 17)",
    ]


# ------------------------------------------------------------------ keys at a terminal


class Typist:
    """Types keys into a shell running on a pipe input in a thread, waiting after each
    step for what a person would wait for (the completion, the answer)."""

    def __init__(self, shell: RecordingShell, keys: PipeInput) -> None:
        self.shell = shell
        self.keys = keys
        self.session = terminal_session(shell, input=keys, output=DummyOutput())
        self.exit_code: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.exit_code = self.shell.run_terminal(self.session)

    def type(self, keys: str) -> None:
        self.keys.send_text(keys)

    def until(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 20
        while not condition():
            assert time.monotonic() < deadline, f"waited in vain for {what}"
            time.sleep(0.01)

    def line(self) -> str:
        return self.session.default_buffer.text

    def end(self) -> int | None:
        """Ctrl-D, as a recorder ends the shell; the shell's exit code."""
        if self.thread.is_alive():
            self.type("\x04")
            self.thread.join(20)
        return self.exit_code


@contextmanager
def typing_into(shell: RecordingShell) -> Iterator[Typist]:
    with create_pipe_input() as keys:
        typist = Typist(shell, keys)
        try:
            yield typist
        finally:
            typist.end()
            shell.close()


def test_tab_completes_a_legal_move_and_a_refused_line_comes_back_for_editing(
    server: BackgroundServer, client: Client
) -> None:
    game_id = dealt_game(server)
    shell = RecordingShell(client, game_id, out=io.StringIO(), prefetch=True)
    assert shell.prompt() == "Ann> "
    with typing_into(shell) as typist:
        typist.type("res\t")  # only Ann's reserves start so (`redo` is not `res...`)
        typist.until(lambda: typist.line() == "reserve ", "Tab to complete `reserve `")
        typist.type("3.4\r")
        typist.until(lambda: shell.prompt() == "Bob> ", "the reserve to be recorded")
        typist.type("take w w w\r")  # one colour three times: refused, the line kept
        typist.until(lambda: typist.line() == "take w w w", "the refused line to come back")
        typist.type("\x7f\x7f\r")  # two backspaces: `take w w`
        typist.until(lambda: shell.prompt() == "Ann> ", "the corrected line to be recorded")
        assert typist.end() == 0
    recorded = moves_of(client, game_id)
    assert (recorded[-3], recorded[-1]) == ("reserve 3.4", "take w w")  # the server dealt between
    assert shell.refusals == 1
    # Both typed lines were kept for the next session (and Ctrl-R), the refused one too.
    history = list(typist.session.history.load_history_strings())
    assert history[:3] == ["take w w", "take w w w", "reserve 3.4"]


def test_ctrl_r_finds_a_line_typed_in_an_earlier_session(
    server: BackgroundServer, client: Client
) -> None:
    game_id = dealt_game(server)
    with typing_into(RecordingShell(client, game_id, out=io.StringIO())) as first:
        first.type("take w u g\r")
        first.until(lambda: first.shell.version == 17, "Ann's move")
    with typing_into(RecordingShell(client, game_id, out=io.StringIO())) as second:
        second.type("undo\r")  # back to Ann, then find her line again
        second.until(lambda: second.shell.version == 18, "the undo")
        second.type("\x12w u\r")  # Ctrl-R, search, Enter ends the search with the line
        second.until(lambda: second.line() == "take w u g", "Ctrl-R to find the line")
        second.type("\r")
        second.until(lambda: second.shell.version == 19, "the line found to be recorded")
    assert moves_of(client, game_id)[-1] == "take w u g"


def test_completion_offers_the_next_word_of_the_legal_moves(
    server: BackgroundServer, client: Client
) -> None:
    game_id = dealt_game(server)
    shell = RecordingShell(client, game_id, address=server.target, out=io.StringIO())
    completer = MoveCompleter(shell.moves_now, COMMANDS)

    def offered(text: str) -> list[str]:
        found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
        return [c.text for c in found]

    _, legal = client.legal_moves(game_id)
    notations = [m.notation for m in legal]
    third = [n.split()[2] for n in notations if n.startswith("take w ") and len(n.split()) > 2]
    assert [word.rstrip() for word in offered("take w ")] == list(dict.fromkeys(third))
    # A space follows a word no legal move ends with, so the next Tab goes on at once.
    assert offered("take w ") == ["u ", "g ", "r ", "w"]
    assert offered("take w u ") == [n.split()[3] for n in notations if n.startswith("take w u ")]
    assert offered("TAKE W U G") == ["g"]  # any case, completed as the notation writes it
    assert offered("reserve 3.") == ["3.1", "3.2", "3.3", "3.4", "3.deck"]
    assert offered("re") == ["reserve ", "redo"]  # first words: moves, then commands
    assert offered("no such ") == []


def test_the_legal_moves_are_fetched_once_per_revision(
    server: BackgroundServer, client: Client
) -> None:
    game_id = dealt_game(server)
    fetched: list[int] = []
    original = client.legal_moves

    def counting(game: str, revision: int = 0) -> tuple[object, list[object]]:
        fetched.append(revision)
        return original(game, revision)  # type: ignore[return-value]

    client.legal_moves = counting  # type: ignore[assignment, method-assign]
    shell = RecordingShell(client, game_id, address=server.target, out=io.StringIO())
    completer = MoveCompleter(shell.moves_now)
    for text in ("t", "take ", "take w ", "r", "reserve 1"):
        list(completer.get_completions(Document(text), CompleteEvent(completion_requested=True)))
    shell.handle("take w u g")
    list(completer.get_completions(Document("t"), CompleteEvent(completion_requested=True)))
    assert fetched == [16, 17]


def test_the_prompt_names_the_table_for_a_reveal_and_says_when_the_game_is_over(
    server: BackgroundServer, client: Client
) -> None:
    game_id = new_game(server)  # table mode: the recorder types the layout turned up first
    shell = RecordingShell(client, game_id, out=io.StringIO())
    assert shell.prompt() == "table> "
    client.abandon(game_id, reason="closing time")
    shell.handle("show")
    assert shell.prompt() == "game over> "
    assert shell.moves_now() is None  # nothing to complete
    shell.handle("reveal 1.1 1w0:u1g1r1k1")
    assert shell.kept == "reveal 1.1 1w0:u1g1r1k1"


def test_move_index_word_by_word() -> None:
    index = MoveIndex(["take w u g", "take w u", "take w w", "buy 1.2", "build a|b own a"])
    assert [word for word, _ in index.following(["take", "w"], "")] == ["u", "w"]
    [(word, following)] = index.following(["take", "w"], "u")
    assert (word, following.moves, following.ends) == ("u", ["take w u g", "take w u"], True)
    [(word, following)] = index.following(["take", "w", "u"], "")
    assert (word, following.moves, following.ends) == ("g", ["take w u g"], True)
    first = [
        (word, following.moves, following.ends) for word, following in index.following([], "BU")
    ]
    assert first == [("buy", ["buy 1.2"], False), ("build", ["build a|b own a"], False)]
    assert [word for word, _ in index.following(["BUILD"], "A")] == ["a|b"]
    assert list(index.following(["take", "x"], "")) == []


def test_a_long_history_file_is_cut_to_whole_entries(isolated_home: Path) -> None:
    path = _history_file("splendor")
    entry = "\n# 2026-01-01 00:00:00\n+take w u g\n"
    path.write_text(entry * (MAX_HISTORY_BYTES // len(entry) + 10), encoding="utf-8")
    assert str(path).startswith(str(isolated_home))
    _history_file("splendor")
    kept = path.read_text(encoding="utf-8")
    assert 0 < len(kept) <= MAX_HISTORY_BYTES // 2
    assert kept.startswith("# 2026")
    assert kept.endswith("+take w u g\n")


# ------------------------------------------------------------------ tablelog use


def test_use_sets_the_current_game_per_server(
    server: BackgroundServer, client: Client, isolated_home: Path
) -> None:
    game_id = dealt_game(server)
    other_id = dealt_game(server)
    none = tablelog(server, "use", ok=False)
    assert none.returncode == 1
    assert none.stdout.startswith(f"no current game on {server.target}")
    no_game = tablelog(server, "show", ok=False)
    assert no_game.returncode == 2
    assert "`tablelog use GAME`" in no_game.stderr
    assert tablelog(server, "move", "", ok=False).returncode == 2  # no id, no move, no game
    assert tablelog(server, "use", game_id).stdout.startswith(f"current game: {game_id}  ")
    assert tablelog(server, "use").stdout.startswith(f"{game_id}  splendor")
    # The state lives in the (test's own) XDG state directory, one file per server.
    saved = list((isolated_home / ".local/state").rglob("*.game"))
    assert [p.read_text(encoding="utf-8") for p in saved] == [game_id]

    said = tablelog(server, "move", "take", "w", "u", "g").stdout
    assert said.startswith("1. Ann: take w u g  (revision 17)")
    assert tablelog(server, "move", "take r r").stdout.startswith("2. Bob: take r r")
    assert tablelog(server, "show").stdout.startswith("revision 18 · to move: Ann")
    assert tablelog(server, "info").stdout.startswith(f"{game_id}  splendor")
    assert "to move: Ann" in tablelog(server, "legal").stdout
    assert tablelog(server, "undo").stdout.startswith("undid 2. Bob's take r r")
    assert tablelog(server, "redo").stdout.startswith("redid 2. Bob's take r r")
    tablelog(server, "annotate", "a", "greedy", "take", "--glyph", "?")
    assert [(n.comment, n.glyph) for n in client.annotations(game_id)] == [("a greedy take", "?")]
    assert "Bob: take r r" in tablelog(server, "replay", "--all").stdout
    assert "take r r" in tablelog(server, "audit").stdout
    watched = tablelog(server, "watch", "--timeout", "0.5").stdout
    assert watched.startswith(f"{game_id}  splendor")

    # The explicit forms are unchanged, on another game while this one is current.
    said = tablelog(server, "move", other_id, "take", "k", "k").stdout
    assert said.startswith("1. Ann: take k k")
    assert tablelog(server, "show", other_id).stdout.startswith("revision 17 · to move: Bob")
    assert moves_of(client, game_id)[-2:] == ["take w u g", "take r r"]
    # A mistyped id is reported as a missing game, never recorded as a move.
    typo = tablelog(server, "move", "zzzzzzzzzzzz", "take w u g", ok=False)
    assert typo.returncode == 1
    assert "GAME_NOT_FOUND" in typo.stderr

    # Another server has its own current game (none here).
    elsewhere = f"127.0.0.1:{free_port()}"
    env = dict(os.environ, TABLELOG_ADDRESS=elsewhere, TABLELOG_USER="cli-tester")
    unused = subprocess.run(
        [*tablelog_command(), "use"], capture_output=True, text=True, env=env, timeout=60
    )
    assert unused.stdout.startswith(f"no current game on {elsewhere}")
    assert tablelog(server, "use", "--clear").stdout.startswith("no current game")
    assert tablelog(server, "show", ok=False).returncode == 2


def test_record_without_a_game_uses_the_current_one(server: BackgroundServer) -> None:
    game_id = dealt_game(server)
    refused = tablelog(server, "record", stdin="take w u g\n", ok=False)
    assert refused.returncode == 2
    assert "tablelog use GAME" in refused.stderr
    tablelog(server, "use", game_id)
    done = tablelog(server, "record", stdin="take w u g\n")
    assert "1. Ann: take w u g  (revision 17)" in done.stdout.splitlines()
    as_json = tablelog(server, "record", "--json", stdin="", ok=False)
    assert json.loads(as_json.stderr)["error"]["code"] == "USAGE"


def test_amend_insert_and_delete_in_the_shell_keep_history_by_name(
    server: BackgroundServer, client: Client
) -> None:
    """A recorder fixes a move several moves back with one line: `history` shows the
    corrected moves, each named by the revision that put it in."""
    game_id = dealt_game(server)
    lines = [
        "take w u g",  # Ann, revision 17: the move to correct
        "take r r",  # Bob
        "take u r k",  # Ann
        "amend 17 take w u k",
        "amend seventeen",  # not a revision
        "history",
        "amend 99 take w u k",  # no such move
    ]
    done = tablelog(server, "record", game_id, stdin="\n".join(lines) + "\n", ok=False)
    said = done.stdout.splitlines()
    amended = said[said.index("Bob> amend 17 take w u k") + 1]
    assert amended.startswith("amended 1. Ann's take w u g (revision 17) → take w u k")
    assert any(line.startswith("usage: amend N MOVE [--drop-tail]") for line in said)
    history = said[said.index("Bob> history") + 1 : said.index("Bob> amend 99 take w u k")]
    assert history[-3:] == [
        "   1. Ann: take w u k  (revision 20)",
        "   2. Bob: take r r  (revision 18)",
        "   3. Ann: take u r k  (revision 19)",
    ]
    assert moves_of(client, game_id)[-3:] == ["take w u k", "take r r", "take u r k"]
    assert done.returncode == 1  # the move of revision 99 was refused
    # delete, then insert it back: two lines, the same moves again (the later move still
    # applies in between: Splendor's notation names no seat).
    tablelog(server, "record", game_id, stdin="delete 18\ninsert 19 take r r\n")
    assert moves_of(client, game_id)[-3:] == ["take w u k", "take r r", "take u r k"]


def test_completing_a_buy_names_the_card_it_takes() -> None:
    """Issue 26: after `buy 1.` the completion offers `1.2` with the card at that place."""
    index = MoveIndex(["buy 1.2", "buy 1.4", "take w u g"], {"buy 1.2": "1k0:g3", "take w u g": ""})
    completer = MoveCompleter(lambda: index)
    found = list(
        completer.get_completions(Document("buy 1."), CompleteEvent(completion_requested=True))
    )
    meta = {c.text: c.display_meta_text for c in found}
    assert meta == {"1.2": "buy 1.2 (1k0:g3)", "1.4": "buy 1.4"}
