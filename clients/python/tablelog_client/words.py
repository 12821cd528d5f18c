"""What the CLI says about events and results, by the players' names: "Ann: take w u g",
"undid 12. Bob's buy 1.2 (revision 25)", "Ann wins with 16; Bob 15".

The events carry data only (seats, revisions): who moved is the seat that was to move in
the state before the event, so a `Narrator` follows the states of a replay or a watch.
A move the viewer may not see arrives already redacted and is described as such."""

from __future__ import annotations

from collections.abc import Sequence

from tablelog.v1 import events_pb2, game_pb2


def counted(count: float, noun: str) -> str:
    """A count with its noun agreeing in number: "1 game", "3 games", "1.5 wins" (a shared
    win counts a part); every noun the CLI counts takes an -s."""
    number = f"{count:g}" if isinstance(count, float) else str(count)
    return f"{number} {noun}" if count == 1 else f"{number} {noun}s"


def seat_name(players: Sequence[str], seat: int) -> str:
    return players[seat] if 0 <= seat < len(players) else f"seat {seat}"


def result_words(result: game_pb2.GameResult, players: Sequence[str]) -> str:
    """Who won, by name, with every score: "Ann wins with 16; Bob 15, Cleo 9"."""
    totals = {score.seat: score.total for score in result.scores}
    winners = list(result.winners)
    if len(winners) == 1:
        seat = winners[0]
        head = f"{seat_name(players, seat)} wins"
        head += f" with {totals[seat]}" if seat in totals else ""
    elif winners:
        shared = [
            seat_name(players, s) + (f" ({totals[s]})" if s in totals else "") for s in winners
        ]
        head = f"{', '.join(shared[:-1])} and {shared[-1]} share the win"
    else:
        head = "nobody wins"
    others = sorted((seat for seat in totals if seat not in winners), key=lambda s: -totals[s])
    if others:
        head += "; " + ", ".join(f"{seat_name(players, s)} {totals[s]}" for s in others)
    return head + (f" (tie-break: {result.tiebreak})" if result.tiebreak else "")


class Narrator:
    """Describes the events of one game in order. `to_move` is whose decision it was
    before the next event (None: not known, e.g. a watch joined mid-game); `moves` keeps
    what each recorded or redone revision was, so an undo or redo can name it."""

    def __init__(self, players: Sequence[str], to_move: game_pb2.ToMove | None = None) -> None:
        self.players = list(players)
        self.to_move = to_move
        self.moves: dict[int, str] = {}
        self.movers: dict[int, str | None] = {}
        """Who made the move each revision put in: a name, "" for the table (its reveals and
        the server's deals), None if not known (an amendment's new move is made by whoever
        made the move it replaces)."""
        self.listed: dict[int, str] = {}
        """The move each revision put in as a move list shows it ("Bob: take w u k",
        "table: reveal 1.1 ..."), an amendment's move too."""
        self.numbers: dict[int, int] = {}
        """The number the text record gives the player's move a revision put in, where the
        caller knows it now (`change_lines`): a move taken back, put back or amended is
        then named "2. Bob's take w g r (revision 19)", as `history` numbers it."""

    def follow(self, to_move: game_pb2.ToMove) -> None:
        """Whose decision it is now (the `to_move` of the state after the last event)."""
        self.to_move = to_move

    def _mover(self, recorded: events_pb2.MoveRecorded) -> str | None:
        """The mover's name; "" for the table's chance outcome; None when not known."""
        if recorded.move.HasField("seat"):
            return seat_name(self.players, recorded.move.seat)
        if self.to_move is None:
            return None
        kind = self.to_move.WhichOneof("who")
        if kind == "seat":
            return seat_name(self.players, self.to_move.seat)
        return "" if kind == "chance" else None

    def named(self, revision: int, unknown: str = "the move") -> str:
        """The move `revision` put in, as an undo, a redo or an amendment names it:
        "2. Bob's take w g r (revision 19)" (its number when known, as `history` shows it)."""
        words = self.moves.get(revision, unknown)
        number = f"{self.numbers[revision]}. " if revision in self.numbers else ""
        return f"{number}{words} (revision {revision})"

    def _amended(self, event: events_pb2.Event, detail: str = "") -> str:
        """ "amended 1. Bob's take w u g (revision 17) → take w u k (reason)"."""
        amended = event.move_amended
        named = amended.amended_revision
        was = self.named(named, amended.removed_notation or "the move")
        mover = self.movers.get(named)
        new = f"{amended.notation} ({detail})" if detail else amended.notation
        put_in = new
        self.listed[event.revision] = put_in
        if mover is not None:
            self.listed[event.revision] = f"{mover or 'table'}: {put_in}"
            new = f"{mover}'s {new}" if mover else f"the table's {new}"
        self.moves[event.revision], self.movers[event.revision] = new, mover
        if amended.kind == events_pb2.AMEND_KIND_INSERT:
            words = f"inserted {new} before {was}"
        elif amended.kind == events_pb2.AMEND_KIND_DELETE:
            words = f"deleted {was}"
        else:
            words = f"amended {was} → {put_in}"
        if amended.dropped_moves:
            plural = "" if amended.dropped_moves == 1 else "s"
            words += (
                f"; dropped {amended.dropped_moves} later move{plural} from revision "
                f"{amended.dropped_from_revision}, which no longer applied"
            )
        return words + (f" ({amended.reason})" if amended.reason else "")

    def describe(self, event: events_pb2.Event, detail: str = "") -> str:
        """`detail`: what the move takes that its notation names by place only, as the
        server sent it beside the event (`ReplayGameResponse.detail`): `buy 1.3 (1k0:g3)`."""
        body = event.WhichOneof("body") or "?"
        if body == "move_recorded":
            recorded = event.move_recorded
            notation = f"{recorded.notation} ({detail})" if detail else recorded.notation
            if recorded.dealt:
                self.moves[event.revision] = f"the deal {notation}"
                self.movers[event.revision] = ""  # the server dealt it for the table
                return f"the server dealt {notation}"
            mover = self._mover(recorded)
            self.movers[event.revision] = mover
            if mover:
                self.moves[event.revision] = f"{mover}'s {notation}"
                self.listed[event.revision] = f"{mover}: {notation}"
            elif mover == "":
                self.moves[event.revision] = f"the table's {notation}"
                # As a line may name its mover ("table: reveal 1.1 ..."): typed back, it records.
                self.listed[event.revision] = f"table: {notation}"
            else:
                self.moves[event.revision] = self.listed[event.revision] = notation
            return self.listed[event.revision]
        if body == "move_undone":
            undone = event.move_undone
            reason = f" ({undone.reason})" if undone.reason else ""
            return f"undid {self.named(undone.undone_revision)}{reason}"
        if body == "move_redone":
            redone = event.move_redone.redone_revision
            self.moves[event.revision] = self.moves.get(redone, "the move")
            return f"redid {self.named(redone)}"
        if body == "move_amended":
            return self._amended(event, detail)
        if body == "annotation_added":
            note = event.annotation_added
            return f"annotation on revision {note.revision}: {note.glyph} {note.comment}".rstrip()
        if body == "annotation_removed":
            return f"annotation {event.annotation_removed.annotation_id} removed"
        if body == "game_ended":
            return f"game over: {result_words(event.game_ended.result, self.players)}"
        if body == "game_abandoned":
            reason = event.game_abandoned.reason
            return "game abandoned" + (f" ({reason})" if reason else "")
        if body == "game_deleted":
            reason = event.game_deleted.reason
            who = f" by {event.actor.user}" if event.actor.user else ""
            return f"game deleted{who}" + (f" ({reason})" if reason else "")
        if body == "game_created":
            return f"game created for {', '.join(self.players)}"
        return body.replace("_", " ")
