import { randomUUID } from "node:crypto";

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import { isLoopback, resolveCa, resolveToken, serverKey } from "./credentials.js";
import { TablelogError } from "./errors.js";
import {
  ClubService,
  Role,
  type CreateTokenResponse,
  type Member,
  type TokenInfo,
  type WhoAmIResponse,
} from "./gen/tablelog/v1/clubs_pb.js";
import type { Event, VariationSchema } from "./gen/tablelog/v1/events_pb.js";
import {
  StandingsService,
  type GetGameTypeStatsResponse,
  type GetPlayerRecordResponse,
  type GetStandingsResponse,
} from "./gen/tablelog/v1/standings_pb.js";
import {
  Mode,
  MoveSchema,
  type GameInfo,
  type GameOptionsSchema,
  type Move,
  type ToMove,
} from "./gen/tablelog/v1/game_pb.js";
import {
  GameStatus,
  TablelogService,
  type AmendMoveRequestSchema,
  type AmendMoveResponse,
  ViewerSchema,
  type Annotation,
  type AuditEntry,
  type GameSummary,
  type LegalMove,
  type RecordMoveResponse,
  type RedoMoveResponse,
  type ReplayGameResponse,
  type StateSnapshot,
  type UndoMoveResponse,
  type VerifyGameResponse,
  type Viewer,
} from "./gen/tablelog/v1/service_pb.js";

/** The client name and version recorded in every event this client appends. */
export const CLIENT_NAME = "tablelog-ts/0.1.0";

/** The default server address, as for every tablelog client. */
export const DEFAULT_ADDRESS = "127.0.0.1:50051";

/** A move-history version; numbers are accepted, bigints are returned. */
export type Version = bigint | number;

/** Who looks at a state: a seat (0-based), a spectator, or everything (admins, audit). */
export type ViewerSpec = "spectator" | "full" | { seat: number };

/** A typed move: a tablelog.v1.Move, or its initializer. */
export type MoveInput = Move | MessageInitShape<typeof MoveSchema>;

export interface ClientOptions {
  /** host:port; default $TABLELOG_ADDRESS or 127.0.0.1:50051. */
  address?: string;
  /** The client program recorded in events; default "tablelog-ts/<version>". */
  client?: string;
  /** Deadline of each unary call in milliseconds (default 30 s). */
  timeoutMs?: number;
  /**
   * The bearer token sent with every call; default $TABLELOG_TOKEN, else the address's entry
   * in $XDG_CONFIG_HOME/tablelog/credentials.json.
   */
  token?: string;
  /** A PEM CA bundle to verify the server with over TLS; default $TABLELOG_CA. */
  ca?: string;
  /**
   * Send the token over plaintext to a server that is not on this machine (a private network
   * you trust). Without it, a token is sent in plaintext only to a loopback address.
   */
  allowInsecure?: boolean;
  /** A Connect transport to use instead of a gRPC connection to `address` (tests). */
  transport?: Transport;
}

export interface CreateGameOptions {
  /** The game's registry name ("splendor"). */
  game: string;
  /** Player names in seat order. */
  players: string[];
  /** "table" (the recorder types every reveal; default) or "dealt" (the server deals). */
  mode?: "table" | "dealt";
  title?: string;
  options?: MessageInitShape<typeof GameOptionsSchema>;
  requestId?: string;
}

export interface WriteOptions {
  /** The version the caller saw; another current version fails with STALE_VERSION. */
  expectedVersion: Version;
  /** Idempotency key: the same id twice is stored once. Default: a fresh UUID. */
  requestId?: string;
}

export interface RecordOptions extends WriteOptions {
  /** With notation: the seat the recorder says is moving. */
  seat?: number;
  /** Also return the state after the move (spectator view and its rendering). */
  includeState?: boolean;
}

/**
 * A correction of the move recorded at a revision: put another move in its place, insert one
 * before it, or take it out. A move is notation text (parsed by the server) or typed; `seat`
 * (with notation) is the seat the recorder says made it.
 */
export type Amendment =
  | { replace: string | MoveInput; seat?: number }
  | { insert: string | MoveInput; seat?: number }
  | { delete: true };

export interface AmendOptions extends WriteOptions {
  /** Why (kept in the event and shown by the audit). */
  reason?: string;
  /**
   * When a later move no longer applies, drop it and every move after it instead of being
   * refused with AMEND_BREAKS_LATER_MOVE.
   */
  dropTail?: boolean;
}

/** A member's role in their club, as the server's Role enum names it. */
export type RoleName = "owner" | "recorder" | "player" | "spectator";

const ROLES: Record<RoleName, Role> = {
  owner: Role.OWNER,
  recorder: Role.RECORDER,
  player: Role.PLAYER,
  spectator: Role.SPECTATOR,
};

export interface ListGamesFilter {
  game?: string;
  status?: GameStatus;
  /** Only games with a seat of this player: the whole name, any case (ListGamesRequest.player). */
  player?: string;
  pageSize?: number;
}

/** One item of a watch: an event with the state after it, or a heartbeat with the head. */
export type WatchItem =
  | { kind: "update"; event: Event; state: StateSnapshot }
  | { kind: "heartbeat"; headRevision: bigint; time: Timestamp | undefined };

/** The legal moves at a revision, every page collected. */
export interface LegalMoves {
  moves: LegalMove[];
  totalSize: number;
  toMove: ToMove | undefined;
}

/**
 * A thin client of tablelog.v1.TablelogService. It carries messages and nothing else: the
 * server parses notation, lists legal moves and renders states. Every failed call throws a
 * TablelogError carrying the server's ErrorInfo reason.
 */
export class TablelogClient {
  /** The generated Connect client, for anything the wrapper does not cover. */
  readonly raw: Client<typeof TablelogService>;
  /** The generated Connect client of the club's members and tokens (ClubService). */
  readonly clubs: Client<typeof ClubService>;
  /** The generated Connect client of club memory (StandingsService). */
  readonly standings: Client<typeof StandingsService>;
  /** Where the token sent with every call came from (undefined: no token is sent). */
  readonly tokenSource: string | undefined;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  /** Throws when the token, the credentials file or the CA file is unusable. */
  constructor(options: ClientOptions = {}) {
    const address = options.address ?? process.env["TABLELOG_ADDRESS"] ?? DEFAULT_ADDRESS;
    const token = resolveToken(address, options.token);
    const transport = options.transport ?? grpcTransport(address, options, token !== undefined);
    this.raw = createClient(TablelogService, transport);
    this.clubs = createClient(ClubService, transport);
    this.standings = createClient(StandingsService, transport);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.tokenSource = token?.source;
    this.headers = { "x-tablelog-client": options.client ?? CLIENT_NAME };
    if (token !== undefined) {
      this.headers["authorization"] = `Bearer ${token.token}`;
    }
  }

  /** The game types the server knows. */
  async listGameTypes(): Promise<GameInfo[]> {
    const response = await this.unary((o) => this.raw.listGameTypes({}, o));
    return response.games;
  }

  async createGame(options: CreateGameOptions): Promise<GameSummary> {
    const response = await this.unary((o) =>
      this.raw.createGame(
        {
          game: options.game,
          players: options.players.map((name) => ({ name })),
          mode: options.mode === "dealt" ? Mode.DEALT : Mode.TABLE,
          title: options.title ?? "",
          options: options.options,
          requestId: options.requestId ?? randomUUID(),
        },
        o,
      ),
    );
    return required(response.game, "CreateGame returned no game");
  }

  async getGame(gameId: string): Promise<GameSummary> {
    const response = await this.unary((o) => this.raw.getGame({ gameId }, o));
    return required(response.game, "GetGame returned no game");
  }

  /** Every game matching the filter, page after page. */
  async *listGames(filter: ListGamesFilter = {}): AsyncGenerator<GameSummary> {
    let pageToken = "";
    do {
      const response = await this.unary((o) =>
        this.raw.listGames(
          {
            game: filter.game ?? "",
            status: filter.status ?? GameStatus.UNSPECIFIED,
            player: filter.player ?? "",
            pageSize: filter.pageSize ?? 0,
            pageToken,
          },
          o,
        ),
      );
      yield* response.games;
      pageToken = response.nextPageToken;
    } while (pageToken !== "");
  }

  /** Records a move, as notation text (parsed by the server) or typed. */
  async record(
    gameId: string,
    move: string | MoveInput,
    options: RecordOptions,
  ): Promise<RecordMoveResponse> {
    const input =
      typeof move === "string"
        ? { case: "notation" as const, value: move }
        : { case: "move" as const, value: create(MoveSchema, move) };
    return this.unary((o) =>
      this.raw.recordMove(
        {
          gameId,
          input,
          expectedVersion: BigInt(options.expectedVersion),
          requestId: options.requestId ?? randomUUID(),
          seat: options.seat,
          includeState: options.includeState ?? false,
        },
        o,
      ),
    );
  }

  /** Takes back the last move in effect (appends MoveUndone; nothing is deleted). */
  async undo(
    gameId: string,
    options: WriteOptions & { reason?: string },
  ): Promise<UndoMoveResponse> {
    return this.unary((o) =>
      this.raw.undoMove(
        {
          gameId,
          expectedVersion: BigInt(options.expectedVersion),
          requestId: options.requestId ?? randomUUID(),
          reason: options.reason ?? "",
        },
        o,
      ),
    );
  }

  /** Re-applies the most recently undone move. */
  async redo(gameId: string, options: WriteOptions): Promise<RedoMoveResponse> {
    return this.unary((o) =>
      this.raw.redoMove(
        {
          gameId,
          expectedVersion: BigInt(options.expectedVersion),
          requestId: options.requestId ?? randomUUID(),
        },
        o,
      ),
    );
  }

  /**
   * Corrects the move recorded at `revision` (a move in effect). Refused with
   * AMEND_BREAKS_LATER_MOVE, naming the first later move that no longer applies, unless
   * `dropTail`.
   */
  async amend(
    gameId: string,
    revision: Version,
    change: Amendment,
    options: AmendOptions,
  ): Promise<AmendMoveResponse> {
    return this.unary((o) =>
      this.raw.amendMove(
        {
          gameId,
          revision: BigInt(revision),
          change: amendmentChange(change),
          expectedVersion: BigInt(options.expectedVersion),
          requestId: options.requestId ?? randomUUID(),
          reason: options.reason ?? "",
          dropTail: options.dropTail ?? false,
        },
        o,
      ),
    );
  }

  async abandon(
    gameId: string,
    options: WriteOptions & { reason?: string },
  ): Promise<GameSummary> {
    const response = await this.unary((o) =>
      this.raw.abandonGame(
        {
          gameId,
          expectedVersion: BigInt(options.expectedVersion),
          requestId: options.requestId ?? randomUUID(),
          reason: options.reason ?? "",
        },
        o,
      ),
    );
    return required(response.game, "AbandonGame returned no game");
  }

  /** Delete a game (the club's owner only): a tombstone is appended; the game leaves the
   * listings and the club's standings, stays readable and verifiable, and refuses every
   * later change. Deleting a deleted game answers its tombstone again. */
  async deleteGame(
    gameId: string,
    options: { requestId?: string; reason?: string } = {},
  ): Promise<GameSummary> {
    const response = await this.unary((o) =>
      this.raw.deleteGame(
        { gameId, requestId: options.requestId ?? randomUUID(), reason: options.reason ?? "" },
        o,
      ),
    );
    return required(response.game, "DeleteGame returned no game");
  }

  /** The state at a revision (default: the head) as one viewer sees it. */
  async state(
    gameId: string,
    options: { revision?: Version; viewer?: ViewerSpec } = {},
  ): Promise<StateSnapshot> {
    const response = await this.unary((o) =>
      this.raw.getState(
        {
          gameId,
          revision: BigInt(options.revision ?? 0),
          viewer: viewer(options.viewer),
        },
        o,
      ),
    );
    return required(response.state, "GetState returned no state");
  }

  /** Every legal move at a revision (default: the head), typed and as notation. */
  async legalMoves(gameId: string, options: { revision?: Version } = {}): Promise<LegalMoves> {
    const moves: LegalMove[] = [];
    let pageToken = "";
    let totalSize = 0;
    let toMove: ToMove | undefined;
    do {
      const response = await this.unary((o) =>
        this.raw.listLegalMoves(
          { gameId, revision: BigInt(options.revision ?? 0), pageToken },
          o,
        ),
      );
      moves.push(...response.moves);
      totalSize = response.totalSize;
      toMove = response.toMove;
      pageToken = response.nextPageToken;
    } while (pageToken !== "");
    return { moves, totalSize, toMove };
  }

  /**
   * Each event between two revisions with the state after it (`to` 0: the head). With
   * `variation` (an annotation id and a line, `[3, 1]` for its line 3.1), the main line up to
   * the annotated move, then the variation's moves, each response marked by its `variation`.
   */
  async *replay(
    gameId: string,
    options: {
      from?: Version;
      to?: Version;
      viewer?: ViewerSpec;
      signal?: AbortSignal;
      variation?: { annotationId: string; line?: number[] };
    } = {},
  ): AsyncGenerator<ReplayGameResponse> {
    const stream = this.raw.replayGame(
      {
        gameId,
        fromRevision: BigInt(options.from ?? 0),
        toRevision: BigInt(options.to ?? 0),
        viewer: viewer(options.viewer),
        variation: options.variation,
      },
      { headers: this.headers, signal: options.signal },
    );
    try {
      yield* stream;
    } catch (error) {
      throw TablelogError.from(error, this.tokenSource);
    }
  }

  /**
   * Replays from a revision (0: only what happens from now on), then follows the game live.
   * Stop by leaving the `for await` loop or aborting `signal`.
   *
   * Unless `resume` is false, a stream the server ends in a way worth retrying
   * (UNAVAILABLE: the server restarting or its Redis away; WATCHER_TOO_SLOW: this reader fell
   * behind) is opened again from the last revision seen, retrying for up to `resumeSeconds`
   * (60) without news; events seen already (by sequence) are skipped, so each comes once. A
   * server that never answered is not retried. As the Python client does.
   */
  async *watch(
    gameId: string,
    options: {
      from?: Version;
      viewer?: ViewerSpec;
      heartbeatSeconds?: number;
      signal?: AbortSignal;
      resume?: boolean;
      resumeSeconds?: number;
    } = {},
  ): AsyncGenerator<WatchItem> {
    const abort = new AbortController();
    const onAbort = (): void => abort.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    let from = BigInt(options.from ?? 0);
    let seenSequence = 0n;
    let answered = false;
    let sinceNews = Date.now();
    let attempt = 0;
    try {
      for (;;) {
        const stream = this.raw.watchGame(
          {
            gameId,
            fromRevision: from,
            viewer: viewer(options.viewer),
            heartbeatSeconds: options.heartbeatSeconds ?? 0,
          },
          { headers: this.headers, signal: abort.signal },
        );
        try {
          for await (const response of stream) {
            answered = true;
            sinceNews = Date.now();
            attempt = 0;
            const item = response.item;
            if (item.case === "update") {
              const event = required(item.value.event, "watch update without event");
              if (event.sequence !== 0n && event.sequence <= seenSequence) {
                continue; // seen before the stream was opened again
              }
              // Annotations share their move's revision: watch again from it.
              seenSequence = event.sequence;
              from = event.revision;
              yield {
                kind: "update",
                event,
                state: required(item.value.state, "watch update without state"),
              };
            } else if (item.case === "heartbeat") {
              if (seenSequence === 0n) {
                from = item.value.headRevision + 1n;
              }
              yield {
                kind: "heartbeat",
                headRevision: item.value.headRevision,
                time: item.value.time,
              };
            }
          }
          return;
        } catch (error) {
          if (abort.signal.aborted) {
            return;
          }
          const refused = TablelogError.from(error, this.tokenSource);
          const worthRetrying =
            refused instanceof TablelogError &&
            (refused.code === Code.Unavailable || refused.reason === "WATCHER_TOO_SLOW");
          const patience = (options.resumeSeconds ?? 60) * 1000;
          if (
            options.resume === false ||
            !answered ||
            !worthRetrying ||
            Date.now() - sinceNews > patience
          ) {
            throw refused;
          }
          attempt += 1;
          await sleep(Math.min(2_000, 100 * 2 ** attempt), abort.signal);
          if (abort.signal.aborted) {
            return;
          }
        }
      }
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      abort.abort();
    }
  }

  /**
   * Anchors a comment and/or glyph to a revision; the move history's version is unchanged.
   * `variation`: a line played instead of that move (moves by `notation`, nested lines in a
   * move's `variations`), checked by the server's rules and answered typed and canonical.
   */
  async annotate(
    gameId: string,
    options: {
      revision: Version;
      comment?: string;
      glyph?: string;
      requestId?: string;
      variation?: MessageInitShape<typeof VariationSchema>;
    },
  ): Promise<Annotation> {
    const response = await this.unary((o) =>
      this.raw.addAnnotation(
        {
          gameId,
          revision: BigInt(options.revision),
          comment: options.comment ?? "",
          glyph: options.glyph ?? "",
          requestId: options.requestId ?? randomUUID(),
          variation: options.variation,
        },
        o,
      ),
    );
    return required(response.annotation, "AddAnnotation returned no annotation");
  }

  async removeAnnotation(
    gameId: string,
    annotationId: string,
    options: { requestId?: string } = {},
  ): Promise<void> {
    await this.unary((o) =>
      this.raw.removeAnnotation(
        { gameId, annotationId, requestId: options.requestId ?? randomUUID() },
        o,
      ),
    );
  }

  /** Every annotation of a game in effect, every page collected. */
  async annotations(gameId: string): Promise<Annotation[]> {
    const annotations: Annotation[] = [];
    let pageToken = "";
    do {
      const response = await this.unary((o) =>
        this.raw.listAnnotations({ gameId, pageToken }, o),
      );
      annotations.push(...response.annotations);
      pageToken = response.nextPageToken;
    } while (pageToken !== "");
    return annotations;
  }

  /** Every event of a game, undone moves included, every page collected. */
  async audit(gameId: string): Promise<AuditEntry[]> {
    const entries: AuditEntry[] = [];
    let pageToken = "";
    do {
      const response = await this.unary((o) => this.raw.getAuditLog({ gameId, pageToken }, o));
      entries.push(...response.entries);
      pageToken = response.nextPageToken;
    } while (pageToken !== "");
    return entries;
  }

  /** Recomputes the hash chain and re-folds every move on the server. */
  async verify(gameId: string): Promise<VerifyGameResponse> {
    return this.unary((o) => this.raw.verifyGame({ gameId }, o));
  }

  /** A game type's league table, overall (season "") or for a season or a year. */
  async getStandings(game: string, season = ""): Promise<GetStandingsResponse> {
    return this.unary((o) => this.standings.getStandings({ game, season }, o));
  }

  /** One player's record: standing, rating history, places, statistics, head to head. */
  async playerRecord(name: string, game = "", season = ""): Promise<GetPlayerRecordResponse> {
    return this.unary((o) => this.standings.getPlayerRecord({ name, game, season }, o));
  }

  /** A game type's statistics: win share by seat order, length in moves, statistics' averages. */
  async gameTypeStats(game: string, season = ""): Promise<GetGameTypeStatsResponse> {
    return this.unary((o) => this.standings.getGameTypeStats({ game, season }, o));
  }

  /** Who this client's token names: the member, their club, and a link token's game. */
  async whoAmI(): Promise<WhoAmIResponse> {
    return this.unary((o) => this.clubs.whoAmI({}, o));
  }

  /** The members of the caller's club. */
  async members(): Promise<Member[]> {
    const response = await this.unary((o) => this.clubs.listMembers({}, o));
    return response.members;
  }

  /** Adds a member to the caller's club (owners only). */
  async addMember(displayName: string, role: RoleName): Promise<Member> {
    const response = await this.unary((o) =>
      this.clubs.addMember({ displayName, role: ROLES[role] }, o),
    );
    return required(response.member, "AddMember returned no member");
  }

  /** Removes a member and revokes their tokens; how many tokens were revoked. */
  async removeMember(memberId: string): Promise<number> {
    const response = await this.unary((o) => this.clubs.removeMember({ memberId }, o));
    return response.tokensRevoked;
  }

  async setRole(memberId: string, role: RoleName): Promise<Member> {
    const response = await this.unary((o) =>
      this.clubs.setRole({ memberId, role: ROLES[role] }, o),
    );
    return required(response.member, "SetRole returned no member");
  }

  /**
   * A new bearer token for a member (default: the caller), answered only here. `expiresInSeconds`
   * 0 is the server's default.
   */
  async createToken(
    options: { memberId?: string; expiresInSeconds?: number } = {},
  ): Promise<CreateTokenResponse> {
    return this.unary((o) =>
      this.clubs.createToken(
        { memberId: options.memberId ?? "", expiresInSeconds: options.expiresInSeconds ?? 0 },
        o,
      ),
    );
  }

  /** The club's tokens (default: every member's), never the tokens themselves. */
  async tokens(memberId = ""): Promise<TokenInfo[]> {
    const response = await this.unary((o) => this.clubs.listTokens({ memberId }, o));
    return response.tokens;
  }

  async revokeToken(tokenId: string): Promise<TokenInfo> {
    const response = await this.unary((o) => this.clubs.revokeToken({ tokenId }, o));
    return required(response.token, "RevokeToken returned no token");
  }

  private async unary<T>(
    call: (options: { headers: Record<string, string>; timeoutMs: number }) => Promise<T>,
  ): Promise<T> {
    try {
      return await call({ headers: this.headers, timeoutMs: this.timeoutMs });
    } catch (error) {
      throw TablelogError.from(error, this.tokenSource);
    }
  }
}

/**
 * A gRPC connection to `address`: TLS when a CA is given or the address says https://,
 * plaintext otherwise. A token goes over plaintext only to this machine unless allowed.
 */
function grpcTransport(address: string, options: ClientOptions, withToken: boolean): Transport {
  const ca = resolveCa(options.ca);
  const scheme = address.includes("://") ? address.slice(0, address.indexOf("://")) : undefined;
  if (scheme !== undefined && scheme !== "http" && scheme !== "https") {
    throw new Error(`tablelog: ${address}: the address is host:port, http:// or https://`);
  }
  if (scheme === "http" && ca !== undefined) {
    throw new Error(`tablelog: a CA (${ca.path}) means TLS, but ${address} says http://`);
  }
  const tls = scheme === "https" || ca !== undefined;
  const server = serverKey(address);
  if (withToken && !tls && !options.allowInsecure && !isLoopback(server)) {
    throw new Error(
      `tablelog: refusing to send a token in plaintext to ${server}: give the server's CA ` +
        "(the ca option or $TABLELOG_CA) to use TLS, or allowInsecure on a network you trust",
    );
  }
  const baseUrl = scheme === undefined ? `${tls ? "https" : "http"}://${address}` : address;
  return createGrpcTransport({
    baseUrl,
    nodeOptions: ca === undefined ? undefined : { ca: ca.pem },
  });
}

/** The AmendMoveRequest.change oneof of an Amendment. */
function amendmentChange(
  change: Amendment,
): MessageInitShape<typeof AmendMoveRequestSchema>["change"] {
  if ("delete" in change) {
    return { case: "deleteMove" as const, value: {} };
  }
  const [kind, move] =
    "replace" in change
      ? (["replaceMove", change.replace] as const)
      : (["insertMove", change.insert] as const);
  const input =
    typeof move === "string"
      ? { case: "notation" as const, value: move }
      : { case: "move" as const, value: create(MoveSchema, move) };
  return { case: kind, value: { input, seat: change.seat } };
}

/** The protobuf Viewer of a ViewerSpec (default: spectator). */
export function viewer(spec: ViewerSpec | undefined): Viewer {
  if (spec === undefined || spec === "spectator") {
    return create(ViewerSchema, { kind: { case: "spectator", value: true } });
  }
  if (spec === "full") {
    return create(ViewerSchema, { kind: { case: "full", value: true } });
  }
  return create(ViewerSchema, { kind: { case: "seat", value: spec.seat } });
}

/** "seat:N", "chance" or "terminal": a ToMove as one short string. */
export function describeToMove(toMove: ToMove | undefined): string {
  switch (toMove?.who.case) {
    case "seat":
      return `seat:${toMove.who.value}`;
    case "chance":
      return "chance";
    case "terminal":
      return "terminal";
    default:
      return "unspecified";
  }
}

function required<T>(value: T | undefined, message: string): T {
  if (value === undefined) {
    throw new Error(message);
  }
  return value;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
