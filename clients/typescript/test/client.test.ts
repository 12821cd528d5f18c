import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport, type ServiceImpl } from "@connectrpc/connect";

import { TablelogClient, TablelogError, describeToMove, viewer } from "../src/index.js";
import { ErrorInfoSchema } from "../src/gen/google/rpc/error_details_pb.js";
import { EventSchema } from "../src/gen/tablelog/v1/events_pb.js";
import { Mode, ToMoveSchema } from "../src/gen/tablelog/v1/game_pb.js";
import {
  GameSummarySchema,
  StateSnapshotSchema,
  TablelogService,
} from "../src/gen/tablelog/v1/service_pb.js";
import { SplendorGem } from "../src/gen/tablelog/v1/splendor_pb.js";
import { ClubService, Role } from "../src/gen/tablelog/v1/clubs_pb.js";
import { StandingsService } from "../src/gen/tablelog/v1/standings_pb.js";

type Impl = Partial<ServiceImpl<typeof TablelogService>>;
type ClubImpl = Partial<ServiceImpl<typeof ClubService>>;

function clubClientFor(impl: ClubImpl): TablelogClient {
  const transport = createRouterTransport(({ service }) => {
    service(ClubService, impl);
  });
  return new TablelogClient({ transport, token: "tl_test" });
}

function clientFor(impl: Impl): TablelogClient {
  const transport = createRouterTransport(({ service }) => {
    service(TablelogService, impl);
  });
  return new TablelogClient({ transport, token: "tl_ada" });
}

function refusal(code: Code, reason: string, metadata: Record<string, string>): ConnectError {
  return new ConnectError("refused by the rules", code, undefined, [
    { desc: ErrorInfoSchema, value: { reason, domain: "tablelog.v1", metadata } },
  ]);
}

const summary = (version: bigint) =>
  create(GameSummarySchema, { gameId: "g1", game: "splendor", version });

describe("TablelogClient", () => {
  it("creates a game in table mode with the caller's token", async () => {
    let seen: { mode?: Mode; players?: string[]; token?: string | null; client?: string | null } =
      {};
    const client = clientFor({
      createGame(request, context) {
        seen = {
          mode: request.mode,
          players: request.players.map((p) => p.name),
          token: context.requestHeader.get("authorization"),
          client: context.requestHeader.get("x-tablelog-client"),
        };
        assert.notEqual(request.requestId, "", "a request id is always sent");
        return { game: summary(1n) };
      },
    });
    const game = await client.createGame({ game: "splendor", players: ["ada", "bo"] });
    assert.equal(game.version, 1n);
    assert.deepEqual(seen.players, ["ada", "bo"]);
    assert.equal(seen.mode, Mode.TABLE);
    assert.equal(seen.token, "Bearer tl_ada"); // who records is the token's member, not a claim
    assert.match(seen.client ?? "", /^tablelog-ts\//);
  });

  it("records notation as text and typed moves as messages", async () => {
    const inputs: string[] = [];
    const client = clientFor({
      recordMove(request) {
        if (request.input.case === "notation") {
          inputs.push(`text:${request.input.value}`);
        } else if (request.input.case === "move") {
          const game = request.input.value.game;
          inputs.push(`typed:${game.case}`);
        }
        assert.equal(request.expectedVersion, 16n);
        assert.equal(request.requestId, "r-1");
        return { game: summary(17n) };
      },
    });
    await client.record("g1", "take w u g", { expectedVersion: 16, requestId: "r-1" });
    await client.record(
      "g1",
      {
        game: {
          case: "splendor",
          value: {
            action: {
              case: "takeDifferent",
              value: { gems: [SplendorGem.WHITE, SplendorGem.BLUE, SplendorGem.GREEN] },
            },
          },
        },
      },
      { expectedVersion: 16n, requestId: "r-1" },
    );
    assert.deepEqual(inputs, ["text:take w u g", "typed:splendor"]);
  });

  it("throws TablelogError carrying the ErrorInfo reason and metadata", async () => {
    const client = clientFor({
      recordMove() {
        throw refusal(Code.FailedPrecondition, "STALE_VERSION", { current_version: "18" });
      },
      undoMove() {
        throw refusal(Code.FailedPrecondition, "ILLEGAL_MOVE", { rule: "TAKE_TWO_NEEDS_FOUR" });
      },
    });
    await assert.rejects(
      client.record("g1", "take w r k", { expectedVersion: 17 }),
      (error: unknown) => {
        assert.ok(error instanceof TablelogError);
        assert.equal(error.reason, "STALE_VERSION");
        assert.equal(error.codeName, "FAILED_PRECONDITION");
        assert.equal(error.code, Code.FailedPrecondition);
        assert.equal(error.domain, "tablelog.v1");
        assert.equal(error.currentVersion, 18n);
        assert.equal(error.detail, "refused by the rules");
        return true;
      },
    );
    await assert.rejects(client.undo("g1", { expectedVersion: 1 }), (error: unknown) => {
      assert.ok(error instanceof TablelogError);
      assert.equal(error.rule, "TAKE_TWO_NEEDS_FOUR");
      assert.equal(error.currentVersion, undefined);
      return true;
    });
  });

  it("reports a failure without details with an empty reason", async () => {
    const client = clientFor({
      getGame() {
        throw new ConnectError("no such game", Code.NotFound);
      },
    });
    await assert.rejects(client.getGame("nope"), (error: unknown) => {
      assert.ok(error instanceof TablelogError);
      assert.equal(error.codeName, "NOT_FOUND");
      assert.equal(error.reason, "");
      return true;
    });
  });

  it("collects every page of legal moves, annotations and the audit log", async () => {
    const client = clientFor({
      listLegalMoves(request) {
        const second = request.pageToken === "p2";
        return {
          moves: [{ notation: second ? "buy 1.1" : "take w u g" }],
          nextPageToken: second ? "" : "p2",
          totalSize: 2,
          toMove: { who: { case: "seat", value: 0 } },
        };
      },
      listAnnotations(request) {
        return request.pageToken === ""
          ? { annotations: [{ comment: "a" }], nextPageToken: "x" }
          : { annotations: [{ comment: "b" }], nextPageToken: "" };
      },
      getAuditLog(request) {
        return request.pageToken === ""
          ? { entries: [{ summary: "created" }], nextPageToken: "x" }
          : { entries: [{ summary: "recorded", undone: true }], nextPageToken: "" };
      },
    });
    const legal = await client.legalMoves("g1");
    assert.deepEqual(
      legal.moves.map((m) => m.notation),
      ["take w u g", "buy 1.1"],
    );
    assert.equal(legal.totalSize, 2);
    assert.equal(describeToMove(legal.toMove), "seat:0");
    assert.deepEqual(
      (await client.annotations("g1")).map((a) => a.comment),
      ["a", "b"],
    );
    assert.deepEqual(
      (await client.audit("g1")).map((e) => e.undone),
      [false, true],
    );
  });

  it("replays as an async iterable, with the viewer it was given", async () => {
    const client = clientFor({
      async *replayGame(request) {
        assert.equal(request.viewer?.kind.case, "seat");
        for (let revision = request.fromRevision; revision <= request.toRevision; revision++) {
          yield {
            event: create(EventSchema, { revision }),
            state: create(StateSnapshotSchema, { revision }),
          };
        }
      },
    });
    const revisions: bigint[] = [];
    for await (const item of client.replay("g1", { from: 2, to: 4, viewer: { seat: 1 } })) {
      revisions.push(item.state?.revision ?? 0n);
    }
    assert.deepEqual(revisions, [2n, 3n, 4n]);
  });

  it("watches updates and heartbeats until the loop is left", async () => {
    let cancelled = false;
    const client = clientFor({
      async *watchGame(request, context) {
        context.signal.addEventListener("abort", () => {
          cancelled = true;
        });
        yield { item: { case: "heartbeat", value: { headRevision: request.fromRevision } } };
        yield {
          item: {
            case: "update",
            value: {
              event: create(EventSchema, {
                revision: 9n,
                body: { case: "moveRecorded", value: { notation: "take w u g" } },
              }),
              state: create(StateSnapshotSchema, { revision: 9n }),
            },
          },
        };
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5_000);
          context.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          });
        });
        yield { item: { case: "heartbeat", value: { headRevision: 9n } } };
      },
    });
    const seen: string[] = [];
    for await (const item of client.watch("g1", { from: 8 })) {
      if (item.kind === "heartbeat") {
        seen.push(`heartbeat ${item.headRevision}`);
      } else {
        const body = item.event.body;
        seen.push(`update ${body.case === "moveRecorded" ? body.value.notation : "?"}`);
        break;
      }
    }
    assert.deepEqual(seen, ["heartbeat 8", "update take w u g"]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(cancelled, "leaving the loop cancels the call");
  });

  it("resumes a watch from the last revision seen, each event once", async () => {
    const asked: bigint[] = [];
    const update = (sequence: bigint, revision: bigint, notation: string) => ({
      item: {
        case: "update" as const,
        value: {
          event: create(EventSchema, {
            sequence,
            revision,
            body: { case: "moveRecorded", value: { notation } },
          }),
          state: create(StateSnapshotSchema, { revision }),
        },
      },
    });
    const client = clientFor({
      async *watchGame(request, context) {
        asked.push(request.fromRevision);
        if (asked.length === 1) {
          yield update(5n, 9n, "take w u g");
          throw new ConnectError("the server is restarting", Code.Unavailable);
        }
        yield update(5n, 9n, "take w u g"); // the backlog from revision 9 again
        yield update(6n, 10n, "reserve 1.1");
        await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      },
    });
    const seen: string[] = [];
    for await (const item of client.watch("g1")) {
      if (item.kind === "update" && item.event.body.case === "moveRecorded") {
        seen.push(item.event.body.value.notation);
      }
      if (seen.length === 2) {
        break;
      }
    }
    assert.deepEqual(seen, ["take w u g", "reserve 1.1"]);
    assert.deepEqual(asked, [0n, 9n]);
  });

  it("ends a watch quietly when its signal is aborted", async () => {
    const client = clientFor({
      async *watchGame(_request, context) {
        yield { item: { case: "heartbeat", value: { headRevision: 1n } } };
        await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
      },
    });
    const abort = new AbortController();
    let items = 0;
    for await (const _item of client.watch("g1", { signal: abort.signal })) {
      items += 1;
      abort.abort();
    }
    assert.equal(items, 1);
  });
});

describe("amending", () => {
  it("sends a replacement, an insertion and a deletion as the change oneof", async () => {
    const seen: string[] = [];
    const client = clientFor({
      amendMove(request) {
        const change = request.change;
        if (change.case === "replaceMove" || change.case === "insertMove") {
          const input = change.value.input;
          const what = input.case === "notation" ? input.value : `typed:${input.value?.game.case}`;
          seen.push(`${change.case} ${request.revision} ${what} seat=${change.value.seat}`);
        } else {
          seen.push(`${change.case} ${request.revision}`);
        }
        assert.equal(request.expectedVersion, 24n);
        assert.notEqual(request.requestId, "", "a request id is always sent");
        return { game: summary(25n), droppedMoves: request.dropTail ? 2 : 0 };
      },
    });
    await client.amend("g1", 18, { replace: "take u r w" }, { expectedVersion: 24 });
    await client.amend(
      "g1",
      18n,
      {
        insert: {
          game: {
            case: "splendor",
            value: { action: { case: "takeDifferent", value: { gems: [SplendorGem.RED] } } },
          },
        },
        seat: 1,
      },
      { expectedVersion: 24n },
    );
    const dropped = await client.amend(
      "g1",
      19,
      { delete: true },
      { expectedVersion: 24, dropTail: true, reason: "never happened" },
    );
    assert.deepEqual(seen, [
      "replaceMove 18 take u r w seat=undefined",
      "insertMove 18 typed:splendor seat=1",
      "deleteMove 19",
    ]);
    assert.equal(dropped.droppedMoves, 2);
    assert.equal(dropped.game?.version, 25n);
  });

  it("surfaces AMEND_BREAKS_LATER_MOVE with the move it breaks", async () => {
    const client = clientFor({
      amendMove() {
        throw refusal(Code.FailedPrecondition, "AMEND_BREAKS_LATER_MOVE", {
          revision: "23",
          notation: "buy 1.1",
        });
      },
    });
    await assert.rejects(
      client.amend("g1", 17, { replace: "take r g k" }, { expectedVersion: 24 }),
      (error: unknown) => {
        assert.ok(error instanceof TablelogError);
        assert.equal(error.reason, "AMEND_BREAKS_LATER_MOVE");
        assert.equal(error.metadata["revision"], "23");
        return true;
      },
    );
  });
});

describe("club calls", () => {
  it("asks who the token names, with the token sent", async () => {
    let authorization: string | null = null;
    const client = clubClientFor({
      whoAmI(_request, context) {
        authorization = context.requestHeader.get("authorization");
        return {
          member: { memberId: "m1", displayName: "rita", role: Role.RECORDER },
          club: { clubId: "c1", name: "local" },
        };
      },
    });
    const me = await client.whoAmI();
    assert.equal(me.member?.displayName, "rita");
    assert.equal(me.member?.role, Role.RECORDER);
    assert.equal(authorization, "Bearer tl_test");
  });

  it("adds a member by role name and creates, lists and revokes their tokens", async () => {
    const calls: string[] = [];
    const client = clubClientFor({
      addMember(request) {
        calls.push(`add ${request.displayName} ${Role[request.role]}`);
        return { member: { memberId: "m2", displayName: request.displayName, role: request.role } };
      },
      createToken(request) {
        calls.push(`token ${request.memberId} ${request.expiresInSeconds}`);
        return { token: "tl_new", info: { tokenId: "t1", memberId: request.memberId } };
      },
      listTokens(request) {
        calls.push(`tokens ${request.memberId}`);
        return { tokens: [{ tokenId: "t1", memberId: "m2", lastChars: "_new" }] };
      },
      revokeToken(request) {
        calls.push(`revoke ${request.tokenId}`);
        return { token: { tokenId: request.tokenId, revoked: true } };
      },
      setRole(request) {
        calls.push(`role ${request.memberId} ${Role[request.role]}`);
        return { member: { memberId: request.memberId, role: request.role } };
      },
      removeMember(request) {
        calls.push(`remove ${request.memberId}`);
        return { tokensRevoked: 1 };
      },
      listMembers() {
        return { members: [{ memberId: "m1" }, { memberId: "m2" }] };
      },
    });
    const member = await client.addMember("sam", "spectator");
    assert.equal(member.role, Role.SPECTATOR);
    const created = await client.createToken({ memberId: member.memberId, expiresInSeconds: 60 });
    assert.equal(created.token, "tl_new");
    assert.deepEqual(
      (await client.tokens("m2")).map((t) => t.lastChars),
      ["_new"],
    );
    assert.equal((await client.revokeToken("t1")).revoked, true);
    assert.equal((await client.setRole("m2", "player")).role, Role.PLAYER);
    assert.equal(await client.removeMember("m2"), 1);
    assert.equal((await client.members()).length, 2);
    assert.deepEqual(calls, [
      "add sam SPECTATOR",
      "token m2 60",
      "tokens m2",
      "revoke t1",
      "role m2 PLAYER",
      "remove m2",
    ]);
  });
});

describe("helpers", () => {
  it("builds viewers", () => {
    assert.equal(viewer(undefined).kind.case, "spectator");
    assert.equal(viewer("full").kind.case, "full");
    const seat = viewer({ seat: 2 }).kind;
    assert.equal(seat.case, "seat");
    assert.equal(seat.value, 2);
  });

  it("describes whose decision it is", () => {
    assert.equal(describeToMove(create(ToMoveSchema, { who: { case: "chance", value: true } })), "chance");
    assert.equal(describeToMove(create(ToMoveSchema, { who: { case: "seat", value: 0 } })), "seat:0");
    assert.equal(describeToMove(create(ToMoveSchema, { who: { case: "terminal", value: true } })), "terminal");
    assert.equal(describeToMove(undefined), "unspecified");
  });
});

describe("club memory", () => {
  it("asks for standings, a player's record and a game type's statistics, with the token and the arguments", async () => {
    const asked: string[] = [];
    let authorization: string | null = null;
    const transport = createRouterTransport(({ service }) => {
      service(StandingsService, {
        getStandings(request, context) {
          authorization = context.requestHeader.get("authorization");
          asked.push(`${request.game} ${request.season}`);
          return { game: request.game, games: 3, rows: [{ displayName: "Ann", games: 3, wins: 1.5 }] };
        },
        getPlayerRecord(request) {
          asked.push(`player ${request.name} ${request.game} ${request.season}`);
          return { player: { displayName: request.name }, games: [{ game: "splendor", ratingChartSvg: "<svg/>" }] };
        },
        getGameTypeStats(request) {
          asked.push(`stats ${request.game} ${request.season}`);
          return { game: request.game, games: 3, seats: [{ order: 1, games: 3, wins: 2 }], averageMoves: 41.5 };
        },
      });
    });
    const client = new TablelogClient({ transport, token: "tl_ada" });
    const table = await client.getStandings("splendor", "2026");
    assert.equal(table.games, 3);
    assert.equal(table.rows[0]?.wins, 1.5);
    const record = await client.playerRecord("Ann", "", "2026");
    assert.equal(record.games[0]?.ratingChartSvg, "<svg/>");
    const stats = await client.gameTypeStats("splendor");
    assert.equal(stats.seats[0]?.wins, 2);
    assert.equal(stats.averageMoves, 41.5);
    assert.equal(authorization, "Bearer tl_ada");
    assert.deepEqual(asked, ["splendor 2026", "player Ann  2026", "stats splendor "]);
  });
});
