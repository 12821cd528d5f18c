/**
 * The three services over the Connect protocol, on the origin that served the page (the
 * `tablelog serve` HTTP port), with the caller's bearer token on every call.
 */
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { TablelogError } from "@tablelog/client";
import { ClubService } from "@tablelog/client";
import { TablelogService } from "@tablelog/client";
import { StandingsService } from "@tablelog/client";

export type Tablelog = Client<typeof TablelogService>;
export type Clubs = Client<typeof ClubService>;
export type Standings = Client<typeof StandingsService>;

export interface Api {
  tablelog: Tablelog;
  clubs: Clubs;
  standings: Standings;
}

/** Names the program in every event it appends (Actor.client), as the other clients do. */
const CLIENT_NAME = "tablelog-web/0.1";

export function connect(token: string, baseUrl: string = window.location.origin): Api {
  const authenticate: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${token}`);
    request.header.set("x-tablelog-client", CLIENT_NAME);
    return next(request);
  };
  const transport = createConnectTransport({
    baseUrl,
    useBinaryFormat: true,
    // The reads marked NO_SIDE_EFFECTS go as Connect GET, so the browser keeps the answers the
    // server marks immutable (a past revision's picture for a chosen viewer; docs/service.md).
    useHttpGet: true,
    interceptors: [authenticate],
  });
  return {
    tablelog: createClient(TablelogService, transport),
    clubs: createClient(ClubService, transport),
    standings: createClient(StandingsService, transport),
  };
}

/** A refusal or failure as a person reads it: the server's sentence, then its reason. */
export function describe(error: unknown): string {
  const known = TablelogError.from(error);
  if (known instanceof TablelogError) {
    const reason = known.reason || known.codeName;
    return known.detail ? `${known.detail} (${reason})` : reason;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The ErrorInfo reason of a refusal ("" for anything else). */
export function reasonOf(error: unknown): string {
  const known = TablelogError.from(error);
  return known instanceof TablelogError ? known.reason : "";
}

/** Whether the server does not know the caller's token (the login box should ask again). */
export function isUnauthenticated(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.Unauthenticated;
}

/** Whether a call was cancelled by us (a page left, a stream replaced). */
export function isCancelled(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.Canceled;
}

/** An idempotency key for one change: a retry of the same change sends the same key. */
export function requestId(): string {
  return crypto.randomUUID();
}
