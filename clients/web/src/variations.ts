/**
 * An annotation's variation on the game page: its lines, and the replay of one line as the
 * server answers it (ReplayGame with `variation`): each move's notation, who made it and
 * the picture after it. The page holds no rules: names and pictures are the server's.
 *
 * A line is named as the API names it (VariationPath.line): [] is the variation itself,
 * [3, 1] the first alternative to its move 3, [3, 1, 2, 2] the second alternative to move 2
 * of that line. In the address a line is written "3.1/2.2", as the CLI writes it.
 */
import { TablelogError } from "@tablelog/client";
import type { Player, Variation, VariationMove } from "@tablelog/client";
import type { ToMove } from "@tablelog/client";
import { describe, type Api } from "./api.js";
import { deciderName, isHistoryStep } from "./history.js";
import { pictureSource } from "./picture.js";
import type { ViewerKind } from "./viewers.js";

/** As the service bounds them (service/limits.py). */
export const MAX_VARIATION_MOVES = 200;
export const MAX_VARIATION_DEPTH = 8;

export interface LinePath {
  annotationId: string;
  line: readonly number[];
}

/** One move of a line as the server replays it. */
export interface VariationStep {
  /** Its number in the line, from 1. */
  number: number;
  notation: string;
  /** Who made it (a player's name, "table" for a chance move). */
  player: string;
  /** Who decides after it. */
  toMove: ToMove | undefined;
  /** The picture after it, as an image source ("" when not asked for). */
  picture: string;
}

export function lineText(line: readonly number[]): string {
  const parts: string[] = [];
  for (let at = 0; at + 1 < line.length; at += 2) {
    parts.push(`${line[at]}.${line[at + 1]}`);
  }
  return parts.join("/");
}

/** The line an address names ("" is the variation itself); undefined for anything else. */
export function parseLine(text: string): number[] | undefined {
  if (text === "") {
    return [];
  }
  const parts = text.split("/");
  if (parts.length > MAX_VARIATION_DEPTH) {
    return undefined;
  }
  const line: number[] = [];
  for (const part of parts) {
    const found = /^([1-9]\d{0,3})\.([1-9]\d{0,3})$/.exec(part);
    if (found === null) {
      return undefined;
    }
    line.push(Number(found[1]), Number(found[2]));
  }
  return line;
}

export function pathKey(path: LinePath): string {
  return `${path.annotationId}/${lineText(path.line)}`;
}

/** The moves of the line `line` of `variation` (undefined when it has no such line). */
export function movesOf(variation: Variation, line: readonly number[]): VariationMove[] | undefined {
  let moves: VariationMove[] = variation.moves;
  for (let at = 0; at + 1 < line.length; at += 2) {
    const nested = moves[line[at]! - 1]?.variations[line[at + 1]! - 1];
    if (nested === undefined) {
      return undefined;
    }
    moves = nested.moves;
  }
  return moves;
}

/**
 * The line `path` of the variation anchored at `anchor`, as the server replays it for
 * `viewer`. Who made its first move: `firstMover` when given (a nested line's first move is
 * made by whoever made the move it replaces), else the decider of the position before the
 * annotated move (the replay's last step of the main line); each later move by the decider
 * after the one before.
 */
export async function replayLine(
  api: Api,
  gameId: string,
  anchor: number,
  path: LinePath,
  viewer: { kind: ViewerKind } | undefined,
  players: readonly Player[],
  options: { picture: boolean; firstMover?: string | undefined },
): Promise<VariationStep[]> {
  const stream = api.tablelog.replayGame({
    gameId,
    // The step before the annotated move, whose state says who is to make it.
    fromRevision: BigInt(Math.max(anchor - 1, 1)),
    viewer,
    variation: { annotationId: path.annotationId, line: [...path.line] },
    picture: options.picture,
  });
  const steps: VariationStep[] = [];
  let decider = options.firstMover;
  let mainToMove: ToMove | undefined;
  for await (const item of stream) {
    if (item.variation === undefined) {
      if (isHistoryStep(item)) {
        mainToMove = item.state?.toMove;
      }
      continue;
    }
    const event = item.event?.body;
    const before = steps[steps.length - 1];
    const player = before === undefined ? (decider ?? deciderName(mainToMove, players)) : deciderName(before.toMove, players);
    steps.push({
      number: item.variationMove,
      notation: event?.case === "moveRecorded" ? event.value.notation : "",
      player,
      toMove: item.state?.toMove,
      picture: options.picture ? pictureSource(item.state?.picture ?? "") : "",
    });
    decider = undefined;
  }
  return steps;
}

/** The moves of an "alternative line" box: one per line or separated by ";" (as the text
 * record separates them), blank ones left out. */
export function typedLine(text: string): string[] {
  return text
    .split(/[\n;]/)
    .map((move) => move.trim())
    .filter(Boolean);
}

/** A refused variation in words: the server's sentence and reason, then the move it names
 * (its place in the line and what was typed) and the rule. */
export function describeRefusal(error: unknown): string {
  const said = describe(error);
  const known = TablelogError.from(error);
  if (!(known instanceof TablelogError)) {
    return said;
  }
  const { path, notation, rule } = known.metadata;
  const move = path ? `move ${path}${notation ? ` "${notation}"` : ""}` : "";
  const parts = [move, rule ? `rule ${rule}` : ""].filter(Boolean);
  return parts.length ? `${said} — ${parts.join(", ")}` : said;
}
