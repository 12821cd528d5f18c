/**
 * A game's history as the page lists it: one entry per revision, in order (GameCreated is
 * revision 1; each move, undo, redo, amendment and the end add one). Annotations keep the
 * revision of the move they were made at and are listed with that move, not as entries.
 */
import type { Event } from "@tablelog/client";
import { AmendKind } from "@tablelog/client";
import type { Player } from "@tablelog/client";
import type { ToMove } from "@tablelog/client";
import type { ReplayGameResponse } from "@tablelog/client";

export type EntryKind = "created" | "move" | "undo" | "redo" | "amend" | "ended" | "abandoned";

export interface Entry {
  revision: number;
  kind: EntryKind;
  /** What happened, as the move list shows it ("take w u g", "undo take w u g"). */
  text: string;
  /** Whose move it was (a player's name, "table" for a chance move); "" for no one's. */
  player: string;
  /** Who decides after this revision. */
  toMove: ToMove | undefined;
  /**
   * Why the step is not this server's word, when it was imported from an export whose chain
   * could not be verified (accept_unverified); "" for a step recorded here or imported verified.
   */
  unverified: string;
  /** The number the text record gives the player's move this step puts in (0: none). */
  number: number;
}

/**
 * What to say of an event imported unverified (its `imported.verified` is false): who
 * recorded it and when are the export's word, which no key of this server vouches for (the
 * audit says the same). "" for any other event.
 */
export function unverifiedImport(event: Event | undefined): string {
  const imported = event?.imported;
  if (imported === undefined || imported.verified) {
    return "";
  }
  const source = imported.source ? ` from ${imported.source}` : "";
  const by = imported.by?.user || "someone";
  return `imported unverified${source} by ${by}: who recorded it and when are the export's word, not checked by this server`;
}

/** The seat or the table whose decision `toMove` is, as a name. */
export function deciderName(toMove: ToMove | undefined, players: readonly Player[]): string {
  switch (toMove?.who.case) {
    case "seat":
      return players[toMove.who.value]?.name ?? `seat ${toMove.who.value}`;
    case "chance":
      return "table";
    case "terminal":
      return "game over";
    default:
      return "";
  }
}

/** Whether the response is a step of the history (annotation events are not). */
export function isHistoryStep(item: ReplayGameResponse): boolean {
  const body = item.event?.body.case;
  return body !== undefined && body !== "annotationAdded" && body !== "annotationRemoved";
}

/**
 * The entry of a replay step. `entries` holds the entries before it (by revision), for who
 * was to move and what an undo or redo names.
 */
export function entryOf(
  item: ReplayGameResponse,
  entries: ReadonlyMap<number, Entry>,
  players: readonly Player[],
): Entry | undefined {
  const event = item.event;
  if (event === undefined || !isHistoryStep(item)) {
    return undefined;
  }
  const revision = Number(event.revision);
  const toMove = item.state?.toMove;
  const before = entries.get(revision - 1);
  const base = { revision, toMove, unverified: unverifiedImport(event), number: item.moveNumber };
  const body = event.body;
  switch (body.case) {
    case "gameCreated":
      return { ...base, kind: "created", text: "game created", player: "" };
    case "moveRecorded": {
      const seat = body.value.move?.seat;
      const player =
        seat !== undefined ? (players[seat]?.name ?? `seat ${seat}`) : deciderName(before?.toMove, players);
      return { ...base, kind: "move", text: withDetail(moveText(event), item.detail), player };
    }
    case "moveUndone": {
      const undone = entries.get(Number(body.value.undoneRevision));
      const what = undone ? `: ${undone.text}` : ` revision ${body.value.undoneRevision}`;
      return { ...base, kind: "undo", text: `undo${what}`, player: "" };
    }
    case "moveRedone": {
      const redone = entries.get(Number(body.value.redoneRevision));
      const what = redone ? redone.text : `revision ${body.value.redoneRevision}`;
      return { ...base, kind: "redo", text: `redo: ${what}`, player: redone?.player ?? "" };
    }
    case "moveAmended":
      return { ...base, kind: "amend", text: withDetail(amendText(body.value), item.detail), player: "" };
    case "gameEnded": {
      const winners = body.value.result?.winners.map((seat) => players[seat]?.name ?? `seat ${seat}`);
      const text = winners?.length ? `game over: ${winners.join(" and ")} won` : "game over";
      return { ...base, kind: "ended", text, player: "" };
    }
    case "gameAbandoned": {
      const reason = body.value.reason ? `: ${body.value.reason}` : "";
      return { ...base, kind: "abandoned", text: `abandoned${reason}`, player: "" };
    }
    default:
      return undefined;
  }
}

/**
 * A move's words with what it took when its notation names it only by its place, as the
 * server sends it beside the step (`buy 1.3 (1k0:g3)`); the notation itself is unchanged.
 */
function withDetail(text: string, detail: string): string {
  return detail ? `${text} (${detail})` : text;
}

function moveText(event: Event): string {
  if (event.body.case !== "moveRecorded") {
    return "";
  }
  const move = event.body.value;
  if (move.hidden) {
    return "(hidden)";
  }
  return move.dealt ? `${move.notation} (dealt)` : move.notation;
}

function amendText(amended: {
  amendedRevision: bigint;
  kind: AmendKind;
  notation: string;
  removedNotation: string;
  hidden: boolean;
  droppedMoves: number;
}): string {
  const at = `revision ${amended.amendedRevision}`;
  const dropped = amended.droppedMoves ? `; ${amended.droppedMoves} later moves dropped` : "";
  if (amended.hidden) {
    return `amended ${at} (hidden)${dropped}`;
  }
  switch (amended.kind) {
    case AmendKind.REPLACE:
      return `amended ${at}: ${amended.removedNotation} → ${amended.notation}${dropped}`;
    case AmendKind.INSERT:
      return `inserted before ${at}: ${amended.notation}${dropped}`;
    case AmendKind.DELETE:
      return `deleted ${at}: ${amended.removedNotation}${dropped}`;
    default:
      return `amended ${at}${dropped}`;
  }
}
