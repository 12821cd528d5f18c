"""`tablelog record`: a shell for recording a game at the table.

The prompt names whoever is to move ("Ann> "); a line is a move in the game's notation or
one of the shell's commands (`help` lists them). Tab completes the next word of a legal
move, from the server's ListLegalMoves for the revision on screen. A refused line comes back
for editing; a game another recorder moved on is caught up with, naming who did what.

At a terminal it runs on prompt_toolkit (line editing, completion, a history of typed lines
in the state directory with Ctrl-R search); from a pipe it reads lines and prints a
transcript ("Ann> take w u g" and the answer), so it can be scripted.

A thin client like the rest of the CLI: the server parses, checks, lists and renders."""

from __future__ import annotations

import argparse
import re
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from tablelog.v1 import game_pb2, service_pb2
from tablelog_client.common import (
    UsageError,
    change_lines,
    describe_game,
    learn_move,
    players_moves,
    refusal,
    remember_version,
    report,
    show_snapshot,
    state_dir,
    who_moves,
)
from tablelog_client.moves import (
    MOVE_REFERENCE,
    MoveInEffect,
    SetupFold,
    Step,
    find_move,
    history_lines,
    moves_in_effect,
    numbered,
    step_words,
)
from tablelog_client.sdk import Client, TablelogError
from tablelog_client.words import Narrator

MAX_LINE = 5_000
"""Characters in one typed line: room for a note's comment (the server takes 4,000) and
its command word; a longer line is refused before anything is sent."""
MAX_HISTORY_BYTES = 256 * 1024
"""The typed-lines history file is cut back to its newer half beyond this."""
CACHED_REVISIONS = 4
"""Legal-move lists kept: the revision on screen and a few before it."""


# ------------------------------------------------------------------ completion


@dataclass
class NextWord:
    """A word that can follow some first words: the legal moves it leads to, and whether
    one of them ends with it (else a space can follow it at once)."""

    moves: list[str] = field(default_factory=list)
    ends: bool = False


class MoveIndex:
    """Legal moves by their words: for each run of first words (case-folded), the words
    that can follow, in the server's order."""

    def __init__(self, notations: Iterable[str], details: Mapping[str, str] | None = None) -> None:
        self.notations = tuple(notations)
        self.details = dict(details or {})
        """What a move takes by place only, by notation (`buy 1.3` → `1k0:g3`)."""
        self._next: dict[tuple[str, ...], dict[str, NextWord]] = {}
        for notation in self.notations:
            words = notation.split()
            for at, word in enumerate(words):
                prefix = tuple(w.casefold() for w in words[:at])
                following = self._next.setdefault(prefix, {}).setdefault(word, NextWord())
                following.moves.append(notation)
                following.ends |= at == len(words) - 1

    def following(self, typed: Iterable[str], partial: str) -> Iterator[tuple[str, NextWord]]:
        """The words that can come after the `typed` words and start with `partial` (any
        case)."""
        start = partial.casefold()
        options = self._next.get(tuple(w.casefold() for w in typed), {})
        for word, following in options.items():
            if word.casefold().startswith(start):
                yield word, following


class MoveCompleter(Completer):
    """Completes the word under the cursor from the legal moves (`moves()`, None while
    they are not known), word by word; the first word also from the shell's commands."""

    def __init__(self, moves: Callable[[], MoveIndex | None], commands: Iterable[str] = ()) -> None:
        self.moves = moves
        self.commands = tuple(commands)

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        before = document.text_before_cursor
        words = before.split()
        partial = "" if not words or before[-1:].isspace() else words.pop()
        index = self.moves()
        if index is not None:
            for word, following in index.following(words, partial):
                moves = following.moves
                detail = index.details.get(moves[0], "") if len(moves) == 1 else ""
                # One move: its words, and the card a `buy 1.3` takes (what to type is `1.3`).
                meta = moves[0] if len(moves) == 1 else f"{len(moves)} moves"
                meta += f" ({detail})" if detail else ""
                yield Completion(
                    word if following.ends else word + " ",
                    start_position=-len(partial),
                    display=word,
                    display_meta=meta,
                )
        if not words:
            for name in self.commands:
                if name.startswith(partial.casefold()):
                    yield Completion(name, -len(partial), display_meta="command")


@dataclass(frozen=True)
class LegalMoves:
    revision: int
    to_move: game_pb2.ToMove
    moves: tuple[service_pb2.LegalMove, ...]
    index: MoveIndex


class LegalMovesCache:
    """ListLegalMoves answers by revision, each fetched once; with `background`, fetched
    ahead in a worker thread as soon as a revision is on screen, so Tab does not wait."""

    def __init__(self, client: Client, game_id: str, *, background: bool) -> None:
        self.client = client
        self.game_id = game_id
        self._worker = ThreadPoolExecutor(max_workers=1) if background else None
        self._fetches: OrderedDict[int, Future[LegalMoves]] = OrderedDict()

    def _fetch(self, revision: int) -> LegalMoves:
        to_move, moves = self.client.legal_moves(self.game_id, revision)
        index = MoveIndex((m.notation for m in moves), {m.notation: m.detail for m in moves})
        return LegalMoves(revision, to_move, tuple(moves), index)

    def _keep(self, revision: int, fetch: Future[LegalMoves]) -> None:
        self._fetches[revision] = fetch
        while len(self._fetches) > CACHED_REVISIONS:
            self._fetches.popitem(last=False)

    def prefetch(self, revision: int) -> None:
        if self._worker is not None and revision not in self._fetches:
            self._keep(revision, self._worker.submit(self._fetch, revision))

    def get(self, revision: int) -> LegalMoves:
        """The legal moves at `revision` (raises TablelogError; a failed fetch is not kept)."""
        fetch = self._fetches.get(revision)
        if fetch is None:
            fetch = Future()
            try:
                fetch.set_result(self._fetch(revision))
            except TablelogError as error:
                fetch.set_exception(error)
            self._keep(revision, fetch)
        try:
            return fetch.result()
        except TablelogError:
            self._fetches.pop(revision, None)
            raise

    def close(self) -> None:
        if self._worker is not None:
            self._worker.shutdown(wait=False, cancel_futures=True)


# ------------------------------------------------------------------ the shell


@dataclass(frozen=True)
class Command:
    """One shell command: its name, what follows it (for help), what it does, and the
    method running it with the rest of the line."""

    name: str
    arguments: str
    summary: str
    run: Callable[[RecordingShell, str], None]


Change = (
    service_pb2.RecordMoveResponse
    | service_pb2.UndoMoveResponse
    | service_pb2.RedoMoveResponse
    | service_pb2.AmendMoveResponse
)


class RecordingShell:
    """One game being recorded: what this terminal has seen of it (version, whose turn)
    and the line to offer again after a refusal."""

    def __init__(
        self,
        client: Client,
        game_id: str,
        *,
        address: str | None = None,
        out: TextIO | None = None,
        prefetch: bool = False,
    ) -> None:
        self.client = client
        self.address = address
        self.out = out or sys.stdout
        self.game = client.get_game(game_id)
        self.game_id = self.game.game_id
        self.players = [p.name for p in self.game.players]
        self.legal = LegalMovesCache(client, self.game_id, background=prefetch)
        self.kept = ""
        self.refusals = 0
        self.done = False
        self.where = ""
        """`FILE:LINE: ` of the line being read from a pipe or file ("" at a terminal)."""

    # -------------------------------------------------------------- output

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def refuse(self, error: TablelogError) -> None:
        """The refusal in the words `tablelog move` uses (on stderr, as there), after the
        `FILE:LINE: ` of a read line."""
        self.refusals += 1
        self.out.flush()
        report(argparse.Namespace(json=False), refusal(error, self.client.address), self.where)

    # -------------------------------------------------------------- what is on screen

    @property
    def version(self) -> int:
        return int(self.game.version)

    def prompt(self) -> str:
        """The prompt, naming who is to move at the version on screen: "Ann> "."""
        if self.game.status != service_pb2.GAME_STATUS_IN_PROGRESS:
            return "game over> "
        kind = self.game.to_move.WhichOneof("who")
        if kind == "chance":
            return "table> "
        if kind == "seat":
            return f"{who_moves(self.game.to_move, self.players)}> "
        return "> "

    def moves_now(self) -> MoveIndex | None:
        """The completer's legal moves (None while they cannot be had: no completion)."""
        if self.game.status != service_pb2.GAME_STATUS_IN_PROGRESS:
            return None
        try:
            return self.legal.get(self.version).index
        except TablelogError:
            return None

    def seen(self, game: service_pb2.GameSummary) -> None:
        """`game` is now on screen: remembered for `tablelog move` too, moves fetched ahead."""
        self.game = game
        remember_version(self.address, self.game_id, self.version)
        if game.status == service_pb2.GAME_STATUS_IN_PROGRESS:
            self.legal.prefetch(self.version)

    def show_board(self) -> None:
        state = self.client.state(self.game_id)
        self.say(show_snapshot(state, self.players))

    def start(self) -> None:
        self.say(describe_game(self.game))
        self.show_board()
        self.say("type a move (Tab completes it) or a command (`help` lists them)")
        self.seen(self.game)

    # -------------------------------------------------------------- lines

    def handle(self, line: str) -> None:
        """Run one typed line; after a refusal, `kept` holds it for editing."""
        self.kept = ""
        line = without_comment(line)
        if not line:
            return
        if len(line) > MAX_LINE:
            self.refusals += 1
            self.say(f"that line is {len(line)} characters; the shell takes {MAX_LINE}")
            return
        word, _, rest = line.partition(" ")
        command = COMMANDS.get(word.casefold())
        try:
            if command is None:
                self.record_move(line)
            else:
                command.run(self, rest.strip())
        except TablelogError as error:
            self.refuse(error)
            if error.reason == "STALE_VERSION":
                self.catch_up()
            self.kept = line

    def after_change(
        self,
        response: Change,
        before: game_pb2.ToMove | None,
        numbers: Mapping[int, int] | None = None,
    ) -> None:
        """The change by name, its moves numbered (`numbers`: those known of moves in the
        middle of the game), then the board."""
        for text in change_lines(self.client, response, before, numbers):
            self.say(text)
        self.seen(response.game)
        self.show_board()

    def catch_up(self) -> None:
        """Another recorder changed the game since this terminal saw it: say what they
        did, by name, and show the game as it is now."""
        narrator = Narrator(self.players, self.game.to_move)
        # The setup's table events typed elsewhere are one line, and the players' moves
        # numbered, as `watch` and `replay` say them (`SetupFold`, `step_words`).
        setup: SetupFold[service_pb2.ReplayGameResponse] = SetupFold(players_moves(self.game) == 0)

        def say(steps: list[Step[service_pb2.ReplayGameResponse]]) -> None:
            for step in steps:
                who = step.items[-1].event.actor.user or "another recorder"
                self.say(f"meanwhile {who} recorded: {step.words}  ({step.revisions})")

        for frame in self.client.replay(self.game_id, self.version + 1):
            event = frame.event
            body = event.WhichOneof("body")
            if body == "move_undone":
                learn_move(self.client, self.game_id, event.move_undone.undone_revision, narrator)
            elif body == "move_redone":
                learn_move(self.client, self.game_id, event.move_redone.redone_revision, narrator)
            elif body == "move_amended":
                amended = event.move_amended.amended_revision
                learn_move(self.client, self.game_id, amended, narrator)
            words, table = step_words(narrator, frame)
            narrator.follow(frame.state.to_move)
            say(setup.take(event.revision, words, frame, table))
        say(setup.flush())
        self.seen(self.client.get_game(self.game_id))
        self.show_board()
        self.say("your line is kept: Enter records it on this game as it is now")

    def record_move(self, notation: str) -> None:
        before = self.game.to_move
        response = self.client.record(self.game_id, notation, expected_version=self.version)
        self.after_change(response, before)

    # -------------------------------------------------------------- commands

    def undo(self, reason: str) -> None:
        response = self.client.undo(self.game_id, expected_version=self.version, reason=reason)
        self.after_change(response, None)

    def redo(self, _: str) -> None:
        before = self.game.to_move
        response = self.client.redo(self.game_id, expected_version=self.version)
        self.after_change(response, before)

    def amend(self, text: str) -> None:
        self._amend("replace", text)

    def insert(self, text: str) -> None:
        self._amend("insert", text)

    def delete(self, text: str) -> None:
        self._amend("delete", text)

    def _amend(self, change: str, text: str) -> None:
        """`amend N MOVE`, `insert N MOVE`, `delete N`: N names the move as `history` shows
        it (`17.`, the players' 17th move; `r45` or `45`, a revision). A later move the
        change breaks is refused with its rule; the line is kept so `--drop-tail` is a
        decision the recorder types again."""
        reference, _, notation = text.partition(" ")
        drop_tail = notation.endswith(" --drop-tail") or notation == "--drop-tail"
        notation = notation.removesuffix("--drop-tail").strip()
        if not MOVE_REFERENCE.fullmatch(reference) or (change != "delete") != bool(notation):
            name = "amend" if change == "replace" else change
            command = COMMANDS[name]
            self.say(
                f"usage: {name} {command.arguments} (N: the move as `history` numbers it, "
                "17., or its revision, r45)"
            )
            return
        try:
            revision, move = find_move(reference, self.moves_in_effect())
        except UsageError as error:
            self.refusals += 1
            self.say(str(error))
            return
        if move is not None and move.table:
            self.say(
                f"{'amending' if change == 'replace' else change + 'ing'} a table event: "
                f"{move.named()}"
            )
        response = self.client.amend(
            self.game_id,
            revision,
            notation or None,
            change=change,
            drop_tail=drop_tail,
            expected_version=self.version,
        )
        self.after_change(response, None, numbered(move))

    def show(self, _: str) -> None:
        self.seen(self.client.get_game(self.game_id))
        self.show_board()

    def list_legal(self, prefix: str) -> None:
        legal = self.legal.get(self.version)
        start = " ".join(prefix.split()).casefold()
        moves = [m for m in legal.moves if m.notation.casefold().startswith(start)]
        which = f" starting {prefix!r}" if start else ""
        self.say(
            f"to move: {who_moves(legal.to_move, self.players)}; {len(moves)} legal moves{which}"
        )
        for move in moves:  # the card a `buy 1.3` takes beside it: what to type is the notation
            self.say(f"  {move.notation}  ({move.detail})" if move.detail else f"  {move.notation}")

    def moves_in_effect(self) -> list[MoveInEffect]:
        """The moves that stand, named and numbered as the text record numbers them."""
        return moves_in_effect(self.client, self.game_id, self.players)

    def history(self, _: str) -> None:
        for line in history_lines(self.moves_in_effect()):
            self.say(line)

    def note(self, text: str) -> None:
        """Annotate the last move that stands (a server's deal is not what one comments)."""
        if not text:
            self.say("write the note: note a bold reserve")
            return
        glyph, _, comment = text.partition(" ")
        if glyph not in GLYPHS:
            glyph, comment = "", text
        # A player's move: a reveal of the table is not what a note at the table is about.
        recorded = [move for move in self.moves_in_effect() if not move.table]
        if not recorded:
            self.say("no move to annotate yet")
            return
        last = recorded[-1]
        annotation = self.client.annotate(
            self.game_id, comment, glyph=glyph, revision=last.revision
        )
        self.say(f"note {annotation.annotation_id} on {last.named()}")

    def help(self, _: str) -> None:
        self.say("a move in the game's notation (Tab completes it), or:")
        for command in COMMANDS.values():
            if command.name != "exit":
                self.say(
                    f"  {(command.name + ' ' + command.arguments).strip():<18} {command.summary}"
                )
        self.say("  Ctrl-R searches the lines typed before; Ctrl-D ends")

    def quit(self, _: str) -> None:
        self.done = True

    # -------------------------------------------------------------- loops

    def run_lines(
        self, lines: Iterable[str], *, source: str = "<stdin>", keep_going: bool = False
    ) -> int:
        """From a pipe or a file: each line echoed after the prompt, then its answer; blank
        lines and `#` comments skipped. A refused line stops the reading there, `FILE:LINE: `
        before the refusal and exit status 1, so nothing written after it is recorded on
        the wrong player's turn.

        With `keep_going`, the lines after a refusal are still read, but each was written
        for a game in which the refused line happened: a move is then sent only when it
        names its mover (`Cleo: take u g k`, which the server checks), and a line that
        would change the game otherwise (an unnamed move, undo, redo, amend, note) is not
        sent. Ends with 1 when any line was refused or not sent."""
        self.start()
        shifted = False  # a line was refused: unnamed moves no longer say whose they are
        for number, line in enumerate(lines, start=1):
            if not without_comment(line):
                continue
            self.where = f"{source}:{number}: "
            self.say(self.prompt() + line)
            if shifted and (reason := self.unsafe_after_refusal(without_comment(line))):
                self.refusals += 1
                self.out.flush()
                print(f"{self.where}not sent: {reason}", file=sys.stderr)
                continue
            refused = self.refusals
            self.handle(line)
            if self.refusals > refused:
                if not keep_going:
                    print(
                        f"{self.where}stopped at this line: the lines after it were not "
                        "read (--keep-going reads on, recording the moves that name their "
                        "mover)",
                        file=sys.stderr,
                    )
                    break
                shifted = True
            if self.done:
                break
        self.where = ""
        return 1 if self.refusals else 0

    @staticmethod
    def unsafe_after_refusal(line: str) -> str:
        """Why `line` is not sent after a refused line ("" when it may be): written as if
        the refused move had happened, it would land on another player's turn."""
        word = line.partition(" ")[0].casefold()
        if word in COMMANDS:
            if word in CHANGING_COMMANDS:
                return f"`{word}` after a refused line would change another move than meant"
            return ""
        if NAMES_MOVER.match(line):
            return ""
        return (
            "after a refused line, a move is recorded only when it names its mover "
            "(`Name: move`), so that it cannot land on another player's turn"
        )

    def run_terminal(self, session: PromptSession[str]) -> int:
        self.start()
        while not self.done:
            try:
                line = session.prompt(self.prompt(), default=self.kept)
            except KeyboardInterrupt:  # Ctrl-C clears the line, as in a shell
                self.kept = ""
                continue
            except EOFError:
                break
            self.handle(line)
        return 0

    def close(self) -> None:
        self.legal.close()


CHANGING_COMMANDS = frozenset({"undo", "redo", "amend", "insert", "delete", "note"})
"""The commands that change the game: not sent after a refused line with --keep-going."""

NAMES_MOVER = re.compile(r"[^:\s][^:]*?:\s+\S")
"""A move line that names its mover, `Cleo: take u g k` (the server reads the name; a colon
inside a move, as in `1k0:g3`, has no space after it)."""

COMMENT = re.compile(r"(?:^|\s)#(?:\s.*)?$")
"""A comment: a line starting `#`, or ` # ...` after a move (a card by id, `buy #47`, is
not one)."""


def without_comment(line: str) -> str:
    """`line` without its `#` comment and surrounding blanks ("" for a comment line)."""
    line = line.strip()
    if line.startswith("#") and not line[1:2].isalnum():
        return ""
    return COMMENT.sub("", line).strip()


GLYPHS = ("!", "?", "!!", "??", "!?", "?!")
"""A note may start with one of these, as `tablelog annotate --glyph` takes them."""

COMMANDS: dict[str, Command] = {
    command.name: command
    for command in (
        Command("undo", "[REASON]", "take back the last move", RecordingShell.undo),
        Command("redo", "", "re-apply the last undone move", RecordingShell.redo),
        Command(
            "legal", "[START]", "the legal moves (those starting START)", RecordingShell.list_legal
        ),
        Command(
            "amend",
            "N MOVE [--drop-tail]",
            "replace move N (17. or r45); every later move is checked again",
            RecordingShell.amend,
        ),
        Command(
            "insert",
            "N MOVE [--drop-tail]",
            "put a forgotten move in before move N (17. or r45)",
            RecordingShell.insert,
        ),
        Command(
            "delete",
            "N [--drop-tail]",
            "take out move N (17. or r45)",
            RecordingShell.delete,
        ),
        Command("show", "", "the game as it is now on the server", RecordingShell.show),
        Command(
            "note",
            "[GLYPH] TEXT",
            "annotate the last move (GLYPH: ! ? !! ?? !? ?!)",
            RecordingShell.note,
        ),
        Command("history", "", "the moves so far, by name", RecordingShell.history),
        Command("help", "", "this list", RecordingShell.help),
        Command("quit", "", "end the shell (or Ctrl-D)", RecordingShell.quit),
        Command("exit", "", "end the shell", RecordingShell.quit),
    )
}
"""The shell's commands by name: a new command is one entry here and its method."""


# ------------------------------------------------------------------ entry


def _bounded_lines(stream: TextIO) -> Iterator[str]:
    """The lines of `stream`, a line longer than MAX_LINE cut there (the shell refuses it)
    with the rest of it skipped: never more than MAX_LINE + 1 characters held."""
    while line := stream.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE and not line.endswith("\n"):
            while (rest := stream.readline(MAX_LINE + 1)) and not rest.endswith("\n"):
                pass
        yield line.rstrip("\r\n")


def _history_file(game: str) -> Path:
    """The typed lines of one game type (a Splendor line is no use in Medici), cut back
    to their newer half when the file has grown past MAX_HISTORY_BYTES."""
    path = state_dir() / "history" / f"{Path(game).name}.txt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_HISTORY_BYTES:
            with path.open("rb") as handle:
                handle.seek(-MAX_HISTORY_BYTES // 2, 2)
                tail = handle.read()
            # FileHistory entries start with a "# time" line: keep whole entries only.
            start = tail.find(b"\n#")
            path.write_bytes(tail[start + 1 :] if start >= 0 else b"")
    except OSError:  # a read-only home: the history is then lost at exit, nothing else
        pass
    return path


def terminal_session(
    shell: RecordingShell, *, input: Input | None = None, output: Output | None = None
) -> PromptSession[str]:
    """The prompt for `shell` at a terminal (or on the given input and output): completion
    on Tab only (a menu popping up at every key would hide the board), and the typed lines
    of this game type kept in the state directory."""
    return PromptSession(
        history=FileHistory(_history_file(shell.game.game)),
        completer=MoveCompleter(shell.moves_now, COMMANDS),
        complete_while_typing=False,
        input=input,
        output=output,
    )


def record(
    client: Client,
    game_id: str,
    *,
    address: str | None = None,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    source: str = "<stdin>",
    keep_going: bool = False,
) -> int:
    """Record `game_id` from the keyboard (a terminal) or from lines (a pipe or a file,
    named `source` in refusals)."""
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    at_terminal = stdin.isatty() and out.isatty()
    shell = RecordingShell(client, game_id, address=address, out=out, prefetch=at_terminal)
    try:
        if at_terminal:
            return shell.run_terminal(terminal_session(shell))
        return shell.run_lines(_bounded_lines(stdin), source=source, keep_going=keep_going)
    finally:
        shell.close()
