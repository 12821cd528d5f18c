#!/usr/bin/env node
/**
 * The TypeScript runner of the conformance scenario (clients/conformance/scenario.json),
 * through the wrapper: `node dist/src/conformance.js --address 127.0.0.1:50051`.
 *
 * It calls as the member its token names (a recorder), and the steps marked
 * `"as": "spectator"` with the spectator's token (--spectator-token or
 * $TABLELOG_SPECTATOR_TOKEN).
 */
import { randomUUID } from "node:crypto";
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { equals, fromJson, type JsonValue } from "@bufbuild/protobuf";

import { TablelogClient, describeToMove, type Amendment, type ViewerSpec } from "./client.js";
import { TablelogError } from "./errors.js";
import { Role, type Member } from "./gen/tablelog/v1/clubs_pb.js";
import type { Event } from "./gen/tablelog/v1/events_pb.js";
import { MoveSchema } from "./gen/tablelog/v1/game_pb.js";
import {
  GameStatus,
  StateSnapshotSchema,
  type GameSummary,
  type RecordMoveResponse,
} from "./gen/tablelog/v1/service_pb.js";
import type {
  GetGameTypeStatsResponse,
  ProjectionLag,
  RatingPoint,
  StandingRow,
} from "./gen/tablelog/v1/standings_pb.js";

type Json = { [key: string]: any };

export const DEFAULT_SCENARIO = fileURLToPath(
  new URL("../../../conformance/scenario.json", import.meta.url),
);

/** Where the runner finds the spectator's token when no flag gives it. */
export const SPECTATOR_TOKEN_ENV = "TABLELOG_SPECTATOR_TOKEN";

/** The scenario's identities (a step's `as`) and the client that calls as the spectator. */
const IDENTITIES = ["recorder", "spectator"] as const;
type Identity = (typeof IDENTITIES)[number];
const SPECTATOR_CLIENT = "spectator";

/** How often a step with `within_seconds` is tried again. */
const POLL_MS = 100;
/**
 * How far a fractional figure (a win share, a rating, an average) may be from the expected
 * one: the server computes them in floating point.
 */
const TOLERANCE = 1e-6;

class ScenarioFailure extends Error {}

function check(label: string, actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual, bigintReplacer);
  const e = JSON.stringify(expected, bigintReplacer);
  if (a !== e) {
    throw new ScenarioFailure(`${label}: expected ${e}, got ${a}`);
  }
}

function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? Number(value) : value;
}

function near(label: string, actual: number, expected: number, tolerance = TOLERANCE): void {
  if (!(Math.abs(actual - Number(expected)) <= tolerance)) {
    throw new ScenarioFailure(`${label}: expected ${expected}, got ${actual}`);
  }
}

/** The projections' lag within the step's bounds (it depends on the moment read). */
function expectLag(lag: ProjectionLag | undefined, bounds: Json): void {
  if (lag === undefined) throw new ScenarioFailure("the answer says nothing of the projections' lag");
  const pending = Number(lag.pendingGames);
  if ("pending_games_at_most" in bounds && pending > bounds["pending_games_at_most"]) {
    throw new ScenarioFailure(`lag: ${pending} games pending, at most ${JSON.stringify(bounds)}`);
  }
  if ("seconds_at_most" in bounds && lag.seconds > bounds["seconds_at_most"]) {
    throw new ScenarioFailure(`lag: ${lag.seconds} s, at most ${bounds["seconds_at_most"]} s`);
  }
  if (Number(lag.projectedGames) < (bounds["projected_games_at_least"] ?? 0)) {
    throw new ScenarioFailure(`lag: ${lag.projectedGames} games projected, fewer than ${JSON.stringify(bounds)}`);
  }
}

function expectStanding(label: string, row: StandingRow | undefined, expected: Json): void {
  if (row === undefined) throw new ScenarioFailure(`${label} no standing`);
  if ("games" in expected) check(`${label} games`, row.games, expected["games"]);
  if ("wins" in expected) near(`${label} wins`, row.wins, expected["wins"]);
  if ("points" in expected) check(`${label} points`, row.points, expected["points"]);
  if ("average_place" in expected) near(`${label} average place`, row.averagePlace, expected["average_place"]);
  if ("rating" in expected) expectRating(`${label} rating`, row.rating, expected["rating"]);
}

function expectRating(label: string, point: RatingPoint | undefined, expected: Json): void {
  if (point === undefined) throw new ScenarioFailure(`${label}: no rating`);
  for (const key of ["mu", "sigma", "ordinal"] as const) {
    if (key in expected) near(`${label} ${key}`, point[key], expected[key]);
  }
}

/** The games and wins of a seat order (none yet: 0 and 0). */
function seatStats(stats: GetGameTypeStatsResponse, order: number): [number, number] {
  const seat = stats.seats.find((s) => s.order === order);
  return seat === undefined ? [0, 0] : [seat.games, seat.wins];
}

interface RecordedCall {
  includeState?: boolean;
  notation?: string;
  move?: Json;
  expectedVersion: bigint;
  requestId: string;
  response: RecordMoveResponse;
}

export class ConformanceRunner {
  private gameId = "";
  private version = 0n;
  private readonly records = new Map<string, RecordedCall>();
  /** Who each identity's token names, asked once (WhoAmI). */
  private readonly members = new Map<Identity, Member>();
  /** What `$run` stands for in this run's names: its players are its own. */
  private readonly runTag = randomUUID().replaceAll("-", "").slice(0, 8);
  /** Each game_type_stats step's answer, for a later step's `since`. */
  private readonly stats = new Map<string, GetGameTypeStatsResponse>();

  constructor(
    private readonly clients: Record<string, TablelogClient>,
    private readonly scenario: Json,
    private readonly log: (line: string) => void = console.log,
  ) {}

  async run(): Promise<{ passed: number; failed: number }> {
    let passed = 0;
    for (const step of this.scenario["steps"] as Json[]) {
      try {
        await this.step(step);
      } catch (error) {
        const message =
          error instanceof TablelogError
            ? error.explain()
            : error instanceof Error
              ? error.message
              : String(error);
        this.log(`FAIL ${step["id"]} (${step["op"]}): ${message}`);
        return { passed, failed: 1 };
      }
      passed += 1;
      this.log(`ok   ${step["id"]} (${step["op"]})`);
    }
    return { passed, failed: 0 };
  }

  private client(step: Json): TablelogClient {
    if (identity(step) === "spectator") {
      return this.clientOf("spectator");
    }
    const client = this.clients[step["client"] ?? "a"];
    if (client === undefined) {
      throw new ScenarioFailure(`unknown client ${step["client"]}`);
    }
    return client;
  }

  private clientOf(who: Identity): TablelogClient {
    const client = this.clients[who === "spectator" ? SPECTATOR_CLIENT : "a"];
    if (client === undefined) {
      throw new ScenarioFailure(
        `no ${who} token: give --spectator-token or set $${SPECTATOR_TOKEN_ENV}`,
      );
    }
    return client;
  }

  /** The member an identity's token names. */
  private async member(who: Identity): Promise<Member> {
    let member = this.members.get(who);
    if (member === undefined) {
      const me = await this.clientOf(who).whoAmI();
      if (me.member === undefined) throw new ScenarioFailure(`the ${who} token names no member`);
      member = me.member;
      this.members.set(who, member);
    }
    return member;
  }

  /** A scenario's string with `$run` replaced by this run's tag, and `$game` (the whole string) by the current game's id. */
  private named(text: string): string {
    return text === "$game" ? this.gameId : text.replaceAll("$run", this.runTag);
  }

  /**
   * One step; with `within_seconds`, tried again until it passes or that time is up (for
   * reads of the projections, which follow the games a moment later).
   */
  private async step(step: Json): Promise<void> {
    const deadline = Date.now() + Number(step["within_seconds"] ?? 0) * 1000;
    for (;;) {
      try {
        await this.attempt(step);
        return;
      } catch (error) {
        if (Date.now() >= deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  private async attempt(step: Json): Promise<void> {
    const expect: Json = step["expect"] ?? {};
    const handler = (this as unknown as Record<string, unknown>)[`op_${step["op"]}`];
    if (typeof handler !== "function") {
      throw new ScenarioFailure(`unknown op ${step["op"]}`);
    }
    try {
      await handler.call(this, step, expect);
    } catch (error) {
      if (expect["error"] === undefined || !(error instanceof TablelogError)) {
        throw error;
      }
      this.expectError(error, expect["error"]);
      return;
    }
    if (expect["error"] !== undefined) {
      throw new ScenarioFailure(`expected ${expect["error"]["reason"]}, but the call succeeded`);
    }
  }

  private expectError(error: TablelogError, expected: Json): void {
    check("status code", error.codeName, expected["code"]);
    check("reason", error.reason, expected["reason"]);
    for (const [key, value] of Object.entries((expected["metadata"] ?? {}) as Json)) {
      const actual = error.metadata[key];
      if (actual === undefined) {
        throw new ScenarioFailure(`error metadata has no ${key}: ${JSON.stringify(error.metadata)}`);
      }
      const wanted = value === "$version" ? this.version.toString() : value;
      if (wanted !== "*") {
        check(`error metadata ${key}`, actual, wanted);
      }
    }
  }

  private expectedVersion(step: Json): bigint {
    const spec = step["version"] ?? "current";
    if (spec === "current") {
      return this.version;
    }
    if (spec === "stale") {
      return this.version - 1n;
    }
    return BigInt(spec);
  }

  private expectGame(game: GameSummary | undefined, expect: Json): void {
    if (game === undefined) {
      throw new ScenarioFailure("the response has no game");
    }
    if ("version" in expect) check("version", game.version, expect["version"]);
    if ("move_count" in expect) check("move_count", game.moveCount, expect["move_count"]);
    if ("to_move" in expect) check("to_move", describeToMove(game.toMove), expect["to_move"]);
    if ("status" in expect) {
      check("status", `GAME_STATUS_${GameStatus[game.status]}`, expect["status"]);
    }
  }

  // -- ops --------------------------------------------------------------------------------

  async op_create(step: Json, expect: Json): Promise<void> {
    const spec = (step["create"] ?? this.scenario["create"]) as Json;
    const game = await this.client(step).createGame({
      game: spec["game"],
      players: (spec["players"] as string[]).map((name) => this.named(name)),
      mode: spec["mode"] === "dealt" ? "dealt" : "table",
      title: this.named(spec["title"] ?? ""),
      requestId: step["request_id"],
    });
    this.gameId = game.gameId;
    this.version = game.version;
    this.expectGame(game, expect);
  }

  async op_record(step: Json, expect: Json): Promise<void> {
    let call: Omit<RecordedCall, "response">;
    if (step["retry_of"] !== undefined) {
      const original = this.records.get(step["retry_of"]);
      if (original === undefined) throw new ScenarioFailure(`no step ${step["retry_of"]}`);
      call = original;
    } else {
      call = {
        notation: step["notation"],
        move: step["move"],
        expectedVersion: this.expectedVersion(step),
        requestId: step["request_id"] ?? crypto.randomUUID(),
        includeState: step["include_state"] ?? false,
      };
    }
    const move =
      call.notation !== undefined ? call.notation : fromJson(MoveSchema, call.move as JsonValue);
    const response = await this.client(step).record(this.gameId, move, {
      expectedVersion: call.expectedVersion,
      requestId: call.requestId,
      includeState: call.includeState ?? false,
    });
    this.records.set(step["id"], { ...call, response });
    this.version = response.game?.version ?? this.version;
    this.expectGame(response.game, expect);
    if ("notation" in expect) {
      const body = response.events[0]?.body;
      check("notation", body?.case === "moveRecorded" ? body.value.notation : undefined, expect["notation"]);
    }
    if ("events" in expect) check("events", response.events.length, expect["events"]);
    if ("state_revision" in expect) {
      check("state revision", response.state?.revision, expect["state_revision"]);
      check("state to_move", describeToMove(response.state?.toMove), expect["to_move"]);
    }
    if (expect["same_as_original"]) {
      const original = this.records.get(step["retry_of"]);
      check("version of the retry", response.game?.version, original?.response.game?.version);
      check("events of the retry", eventIds(response.events), eventIds(original?.response.events ?? []));
    }
  }

  /** Each of `notations` recorded in turn at the current version; the expectation is of the last answer. */
  async op_play(step: Json, expect: Json): Promise<void> {
    let last: RecordMoveResponse | undefined;
    for (const notation of step["notations"] as string[]) {
      last = await this.client(step).record(this.gameId, notation, { expectedVersion: this.version });
      this.version = last.game?.version ?? this.version;
    }
    if (last === undefined) throw new ScenarioFailure("a play step records at least one move");
    this.expectGame(last.game, expect);
  }

  async op_undo(step: Json, expect: Json): Promise<void> {
    const response = await this.client(step).undo(this.gameId, {
      expectedVersion: this.expectedVersion(step),
      requestId: step["request_id"],
      reason: step["reason"],
    });
    this.version = response.game?.version ?? this.version;
    this.expectGame(response.game, expect);
  }

  async op_redo(step: Json, expect: Json): Promise<void> {
    const response = await this.client(step).redo(this.gameId, {
      expectedVersion: this.expectedVersion(step),
      requestId: step["request_id"],
    });
    this.version = response.game?.version ?? this.version;
    this.expectGame(response.game, expect);
  }

  async op_amend(step: Json, expect: Json): Promise<void> {
    const change = step["change"] ?? "replace";
    const move: string | Json | undefined =
      step["notation"] ?? (step["move"] === undefined ? undefined : fromJson(MoveSchema, step["move"]));
    let amendment: Amendment;
    if (change === "delete") {
      amendment = { delete: true };
    } else if ((change === "replace" || change === "insert") && move !== undefined) {
      amendment = change === "replace" ? { replace: move } : { insert: move };
    } else {
      throw new ScenarioFailure(`an amend step is replace or insert with a move, or delete: ${change}`);
    }
    const response = await this.client(step).amend(this.gameId, step["revision"], amendment, {
      expectedVersion: this.expectedVersion(step),
      requestId: step["request_id"],
      reason: step["reason"],
    });
    this.version = response.game?.version ?? this.version;
    this.expectGame(response.game, expect);
  }

  async op_whoami(step: Json, expect: Json): Promise<void> {
    const who = identity(step);
    this.members.delete(who); // asked afresh: this step is the check
    const member = await this.member(who);
    if ("role" in expect) check("role", `ROLE_${Role[member.role]}`, expect["role"]);
    if (member.memberId === "") throw new ScenarioFailure(`the ${who} token names no member`);
  }

  async op_game(step: Json, expect: Json): Promise<void> {
    this.expectGame(await this.client(step).getGame(this.gameId), expect);
  }

  async op_state(step: Json, expect: Json): Promise<void> {
    const state = await this.client(step).state(this.gameId, {
      revision: step["revision"] ?? 0,
      viewer: step["viewer"] as ViewerSpec | undefined,
    });
    if ("revision" in expect) check("revision", state.revision, expect["revision"]);
    if ("to_move" in expect) check("to_move", describeToMove(state.toMove), expect["to_move"]);
    if ("moves" in expect) check("moves", state.moves, expect["moves"]);
    if ("moves_count" in expect) check("moves_count", state.moves.length, expect["moves_count"]);
    for (const text of (expect["text_contains"] ?? []) as string[]) {
      if (!state.text.includes(text)) {
        throw new ScenarioFailure(`state text lacks ${JSON.stringify(text)}:\n${state.text}`);
      }
    }
  }

  async op_legal_moves(step: Json, expect: Json): Promise<void> {
    const legal = await this.client(step).legalMoves(this.gameId, {
      revision: step["revision"] ?? 0,
    });
    const notations = legal.moves.map((move) => move.notation);
    for (const text of (expect["contains"] ?? []) as string[]) {
      if (!notations.includes(text)) {
        throw new ScenarioFailure(`legal moves lack ${JSON.stringify(text)}: ${notations.join(", ")}`);
      }
    }
    for (const text of (expect["excludes"] ?? []) as string[]) {
      if (notations.includes(text)) {
        throw new ScenarioFailure(`legal moves include ${JSON.stringify(text)}`);
      }
    }
    if ("total_size" in expect) {
      check("total_size", legal.totalSize, expect["total_size"]);
      check("moves listed", notations.length, expect["total_size"]);
    }
    if ("to_move" in expect) check("to_move", describeToMove(legal.toMove), expect["to_move"]);
  }

  async op_annotate(step: Json, expect: Json): Promise<void> {
    const annotation = await this.client(step).annotate(this.gameId, {
      revision: step["revision"],
      comment: step["comment"],
      glyph: step["glyph"],
      requestId: step["request_id"],
    });
    if ("revision" in expect) check("revision", annotation.revision, expect["revision"]);
    if ("comment" in expect) check("comment", annotation.comment, expect["comment"]);
    if ("glyph" in expect) check("glyph", annotation.glyph, expect["glyph"]);
    if (annotation.annotationId === "") throw new ScenarioFailure("the annotation has no id");
    const game = await this.client(step).getGame(this.gameId);
    check("version after annotating", game.version, this.version);
  }

  async op_annotations(step: Json, expect: Json): Promise<void> {
    const annotations = await this.client(step).annotations(this.gameId);
    if ("count" in expect) check("annotations", annotations.length, expect["count"]);
    if ("comments" in expect) {
      check("comments", annotations.map((a) => a.comment), expect["comments"]);
    }
  }

  async op_replay(step: Json, expect: Json): Promise<void> {
    const viewer = step["viewer"] as ViewerSpec | undefined;
    const items = [];
    for await (const item of this.client(step).replay(this.gameId, {
      from: step["from"] ?? 0,
      to: step["to"] ?? 0,
      viewer,
    })) {
      items.push(item);
    }
    if ("count" in expect) check("replayed items", items.length, expect["count"]);
    const first = items[0];
    const last = items[items.length - 1];
    if (first === undefined || last === undefined) throw new ScenarioFailure("the replay streamed nothing");
    if ("first_revision" in expect) check("first revision", first.event?.revision, expect["first_revision"]);
    if ("last_revision" in expect) check("last revision", last.event?.revision, expect["last_revision"]);
    if (expect["compare_states"]) {
      for (const item of items) {
        const revision = item.state?.revision ?? 0n;
        check("state revision", revision, item.event?.revision);
        const state = await this.client(step).state(this.gameId, { revision, viewer });
        if (item.state === undefined || !equals(StateSnapshotSchema, state, item.state)) {
          throw new ScenarioFailure(`replayed state at revision ${revision} differs from GetState`);
        }
      }
    }
  }

  async op_watch(step: Json, expect: Json): Promise<void> {
    const from = (step["from"] ?? "current") === "current" ? this.version : BigInt(step["from"]);
    const timeoutMs = (step["timeout_seconds"] ?? 15) * 1000;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    const during: Json = step["during"];
    let opened = false;
    try {
      for await (const item of this.client(step).watch(this.gameId, {
        from,
        viewer: step["viewer"] as ViewerSpec | undefined,
        heartbeatSeconds: step["heartbeat_seconds"] ?? 1,
        signal: abort.signal,
      })) {
        if (!opened) {
          // The stream is open once anything (a replayed event or a heartbeat) arrives.
          opened = true;
          await this.step(during);
          this.log(`ok   ${during["id"]} (${during["op"]}, during the watch)`);
          continue;
        }
        if (item.kind !== "update" || item.event.body.case !== "moveRecorded") continue;
        if (item.event.body.value.notation !== expect["notation"]) continue;
        if ("revision" in expect) check("watched revision", item.event.revision, expect["revision"]);
        check("watched state revision", item.state.revision, item.event.revision);
        return;
      }
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
    throw new ScenarioFailure(
      opened ? "the watch missed the move within the timeout" : "the watch sent nothing",
    );
  }

  async op_audit(step: Json, expect: Json): Promise<void> {
    const entries = await this.client(step).audit(this.gameId);
    if ("count" in expect) check("audit entries", entries.length, expect["count"]);
    if ("undone" in expect) check("undone entries", entries.filter((e) => e.undone).length, expect["undone"]);
    check(
      "audit sequences",
      entries.map((e) => Number(e.event?.sequence ?? 0)),
      entries.map((_, i) => i + 1),
    );
    if ("actor" in expect) {
      const member = await this.member(asIdentity(expect["actor"]));
      for (const entry of entries) {
        const sequence = entry.event?.sequence ?? 0n;
        check(`actor of event ${sequence}`, entry.event?.actor?.memberId, member.memberId);
        check(`actor name of event ${sequence}`, entry.event?.actor?.user, member.displayName);
      }
    }
  }

  async op_standings(step: Json, expect: Json): Promise<void> {
    const table = await this.client(step).getStandings(String(step["game"]), String(step["season"] ?? ""));
    check("standings game", table.game, expect["game"]);
    if (table.lag === undefined) {
      throw new ScenarioFailure("the standings say nothing of the projections' lag");
    }
    check("standings rows", table.rows.length <= Number(table.lag.projectedGames) * 6, true);
    expectLag(table.lag, expect["lag"] ?? {});
    for (const wanted of (expect["rows"] ?? []) as Json[]) {
      const name = this.named(wanted["player"]);
      const row = table.rows.find((r) => r.displayName === name);
      if (row === undefined) throw new ScenarioFailure(`the standings have no row of ${JSON.stringify(name)}`);
      expectStanding(`${name}'s`, row, wanted);
    }
  }

  async op_player(step: Json, expect: Json): Promise<void> {
    const found = await this.client(step).playerRecord(
      this.named(step["name"]),
      String(step["game"] ?? ""),
      String(step["season"] ?? ""),
    );
    expectLag(found.lag, expect["lag"] ?? {});
    if ("display_name" in expect) {
      check("display name", found.player?.displayName, this.named(expect["display_name"]));
    }
    if (!("games" in expect)) return;
    const wantedGames = expect["games"] as Json[];
    check("game types", found.games.map((r) => r.game), wantedGames.map((g) => g["game"]));
    found.games.forEach((record, i) => {
      const wanted = wantedGames[i] as Json;
      const label = `${record.game}:`;
      expectStanding(label, record.standing, wanted["standing"] ?? {});
      if ("places" in wanted) check(`${label} places`, record.places, wanted["places"]);
      if ("scores" in wanted) check(`${label} scores`, record.scores, wanted["scores"]);
      if ("history" in wanted) {
        const history = wanted["history"] as Json[];
        check(`${label} rating points`, record.history.length, history.length);
        record.history.forEach((point, index) => {
          const expected = history[index] as Json;
          if ("game_id" in expected) {
            check(`${label} rating ${index}`, point.gameId, this.named(expected["game_id"]));
          }
          expectRating(`${label} rating ${index}`, point, expected);
        });
      }
      if ("head_to_head" in wanted) {
        check(
          `${label} head to head`,
          record.headToHead.map((h) => ({
            opponent: h.opponentName,
            games: h.games,
            ahead: h.ahead,
            level: h.level,
            behind: h.behind,
          })),
          (wanted["head_to_head"] as Json[]).map((h) => ({ ...h, opponent: this.named(h["opponent"]) })),
        );
      }
      for (const [name, average] of Object.entries((wanted["figures"] ?? {}) as Json)) {
        const figure = record.figures.find((f) => f.name === name);
        if (figure === undefined) {
          throw new ScenarioFailure(`${label} no statistic ${name}: ${record.figures.map((f) => f.name).join(", ")}`);
        }
        near(`${label} ${name}`, figure.average, average);
      }
    });
  }

  async op_game_type_stats(step: Json, expect: Json): Promise<void> {
    const stats = await this.client(step).gameTypeStats(String(step["game"]), String(step["season"] ?? ""));
    this.stats.set(step["id"], stats);
    if ("game" in expect) check("statistics game", stats.game, expect["game"]);
    expectLag(stats.lag, expect["lag"] ?? {});
    for (const name of (expect["figures"] ?? []) as string[]) {
      if (!stats.figures.some((f) => f.name === name)) {
        throw new ScenarioFailure(`no statistic ${name}: ${stats.figures.map((f) => f.name).join(", ")}`);
      }
    }
    if (!("added" in expect)) return;
    const earlier = this.stats.get(step["since"]);
    if (earlier === undefined) throw new ScenarioFailure(`no earlier game_type_stats step ${step["since"]}`);
    const added = expect["added"] as Json;
    if ("games" in added) check("games added", stats.games - earlier.games, added["games"]);
    if ("moves" in added) {
      const moves = stats.averageMoves * stats.games - earlier.averageMoves * earlier.games;
      near("moves added", moves, added["moves"], TOLERANCE * Math.max(1, stats.games));
    }
    for (const seat of (added["seats"] ?? []) as Json[]) {
      const [games, wins] = seatStats(stats, seat["order"]);
      const [gamesBefore, winsBefore] = seatStats(earlier, seat["order"]);
      check(`seat order ${seat["order"]} games added`, games - gamesBefore, seat["games"]);
      near(`seat order ${seat["order"]} wins added`, wins - winsBefore, seat["wins"]);
    }
  }

  async op_verify(step: Json, expect: Json): Promise<void> {
    const result = await this.client(step).verify(this.gameId);
    check("verify ok", result.ok, expect["ok"] ?? true);
    if ("events_checked" in expect) check("events checked", result.eventsChecked, expect["events_checked"]);
  }
}

function asIdentity(name: unknown): Identity {
  const found = IDENTITIES.find((known) => known === name);
  if (found === undefined) {
    throw new ScenarioFailure(`unknown identity ${JSON.stringify(name)}: one of ${IDENTITIES.join(", ")}`);
  }
  return found;
}

/** Whom a step calls as: the recorder unless it says `"as": "spectator"`. */
function identity(step: Json): Identity {
  return asIdentity(step["as"] ?? "recorder");
}

function eventIds(events: Event[]): string[] {
  return events.map((e) => `${e.sequence}:${Buffer.from(e.hash).toString("hex")}`);
}

/**
 * The scenario's two connections as the recorder, "a" and "b", and one as the spectator when
 * its token is given (default $TABLELOG_SPECTATOR_TOKEN).
 */
export function conformanceClients(
  address: string,
  connection: {
    token?: string | undefined;
    spectatorToken?: string | undefined;
    ca?: string | undefined;
  } = {},
): Record<string, TablelogClient> {
  const client = "tablelog-ts-conformance/0.1.0";
  const { spectatorToken, ...recorder } = connection;
  const clients: Record<string, TablelogClient> = {
    a: new TablelogClient({ ...recorder, address, client }),
    b: new TablelogClient({ ...recorder, address, client }),
  };
  const spectator = spectatorToken ?? process.env[SPECTATOR_TOKEN_ENV];
  if (spectator !== undefined && spectator !== "") {
    clients[SPECTATOR_CLIENT] = new TablelogClient({
      ca: recorder.ca,
      token: spectator,
      address,
      client,
    });
  }
  return clients;
}

export async function runScenario(
  clients: Record<string, TablelogClient>,
  scenario: Json,
  log: (line: string) => void = console.log,
): Promise<{ passed: number; failed: number }> {
  const steps = Array.isArray(scenario["steps"]) ? (scenario["steps"] as Json[]).length : 0;
  const result = await new ConformanceRunner(clients, scenario, log).run();
  // A run that skipped steps (or a scenario read without any) has not shown conformance.
  if (result.failed === 0 && (steps === 0 || result.passed !== steps)) {
    log(`FAIL ran ${result.passed} of the scenario's ${steps} steps`);
    result.failed = 1;
  }
  log(`conformance: ${result.passed} passed, ${result.failed} failed`);
  return result;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      address: { type: "string", default: process.env["TABLELOG_ADDRESS"] ?? "127.0.0.1:50051" },
      scenario: { type: "string", default: DEFAULT_SCENARIO },
      // Default: $TABLELOG_TOKEN, then the credentials file (see credentials.ts).
      token: { type: "string" },
      // The token of the spectator the scenario's `"as": "spectator"` steps call as.
      // Default: $TABLELOG_SPECTATOR_TOKEN.
      "spectator-token": { type: "string" },
      // Default: $TABLELOG_CA; with a CA the connection is TLS.
      ca: { type: "string" },
    },
  });
  const scenario = JSON.parse(readFileSync(values.scenario, "utf-8")) as Json;
  let clients: Record<string, TablelogClient>;
  try {
    clients = conformanceClients(values.address, {
      token: values.token,
      spectatorToken: values["spectator-token"],
      ca: values.ca,
    });
  } catch (error) {
    // An unusable token, credentials file or CA file: say which, without a stack trace.
    console.error(error instanceof Error ? error.message : String(error));
    return 2;
  }
  const { failed } = await runScenario(clients, scenario);
  return failed === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  process.exitCode = await main();
}
