import { Code, ConnectError } from "@connectrpc/connect";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  PreconditionFailureSchema,
  type BadRequest,
  type PreconditionFailure,
} from "./gen/google/rpc/error_details_pb.js";

/** The canonical gRPC status code names, indexed by code number. */
const CODE_NAMES: readonly string[] = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

/** The canonical name of a gRPC status code ("FAILED_PRECONDITION"). */
export function codeName(code: Code): string {
  return CODE_NAMES[code] ?? `CODE_${code}`;
}

/** ErrorInfo reasons of UNAUTHENTICATED: no token, or one the server does not accept. */
export const TOKEN_MISSING = "TOKEN_MISSING";
export const TOKEN_UNKNOWN = "TOKEN_UNKNOWN";
export const TOKEN_EXPIRED = "TOKEN_EXPIRED";
export const TOKEN_REVOKED = "TOKEN_REVOKED";
/** The ErrorInfo reason of PERMISSION_DENIED when the caller's role does not allow the call. */
export const ROLE_FORBIDS = "ROLE_FORBIDS";

/**
 * An error returned by the tablelog server. `reason` is the stable reason of the
 * google.rpc.ErrorInfo detail (ILLEGAL_MOVE, STALE_VERSION, GAME_NOT_FOUND, ...), `metadata`
 * its metadata ("rule", "current_version", ...). Transport failures have an empty reason.
 */
export class TablelogError extends Error {
  override readonly name: string = "TablelogError";
  /** The gRPC status code. */
  readonly code: Code;
  /** The status code's canonical name, e.g. "FAILED_PRECONDITION". */
  readonly codeName: string;
  /** The ErrorInfo reason, e.g. "STALE_VERSION"; empty when the server sent none. */
  readonly reason: string;
  /** The ErrorInfo domain ("tablelog.v1"). */
  readonly domain: string;
  /** The ErrorInfo metadata. */
  readonly metadata: Readonly<Record<string, string>>;
  readonly badRequest: BadRequest | undefined;
  readonly preconditionFailure: PreconditionFailure | undefined;
  /** The status message as the server wrote it (the rule in a player's words). */
  readonly detail: string;

  constructor(error: ConnectError) {
    const info = error.findDetails(ErrorInfoSchema)[0];
    const reason = info?.reason ?? "";
    super(`${codeName(error.code)}${reason ? ` ${reason}` : ""}: ${error.rawMessage}`, {
      cause: error,
    });
    this.code = error.code;
    this.codeName = codeName(error.code);
    this.reason = reason;
    this.domain = info?.domain ?? "";
    this.metadata = { ...(info?.metadata ?? {}) };
    this.badRequest = error.findDetails(BadRequestSchema)[0];
    this.preconditionFailure = error.findDetails(PreconditionFailureSchema)[0];
    this.detail = error.rawMessage;
  }

  /** The rule code of an ILLEGAL_MOVE (ErrorInfo metadata "rule"). */
  get rule(): string | undefined {
    return this.metadata["rule"];
  }

  /** The server's current version carried by a STALE_VERSION error. */
  get currentVersion(): bigint | undefined {
    const value = this.metadata["current_version"];
    return value === undefined || value === "" ? undefined : BigInt(value);
  }

  /** The refusal in a sentence for a person: the server's words, then what it means. */
  explain(): string {
    const reason = this.reason ? ` (${this.reason})` : "";
    return `${this.codeName}${reason}: ${this.detail}`;
  }

  /**
   * Converts anything thrown by a call into a TablelogError (other errors pass through):
   * an UnauthenticatedError or PermissionDeniedError for those two codes.
   */
  static from(error: unknown, tokenSource?: string): unknown {
    if (error instanceof TablelogError) {
      return error;
    }
    if (error instanceof ConnectError) {
      switch (error.code) {
        case Code.Unauthenticated:
          return new UnauthenticatedError(error, tokenSource);
        case Code.PermissionDenied:
          return new PermissionDeniedError(error);
        default:
          return new TablelogError(error);
      }
    }
    return error;
  }
}

/**
 * The server does not know who is calling: no token was sent, or the token is unknown,
 * expired or revoked (`reason` TOKEN_MISSING, TOKEN_UNKNOWN, TOKEN_EXPIRED, TOKEN_REVOKED).
 */
export class UnauthenticatedError extends TablelogError {
  override readonly name: string = "UnauthenticatedError";
  /** Where the refused token came from ("$TABLELOG_TOKEN", a file); undefined: none sent. */
  readonly tokenSource: string | undefined;

  constructor(error: ConnectError, tokenSource?: string) {
    super(error);
    this.tokenSource = tokenSource;
  }

  override explain(): string {
    const sent =
      this.tokenSource === undefined ? "no token was sent" : `the token came from ${this.tokenSource}`;
    const advice = AUTHENTICATION_ADVICE[this.reason] ?? GIVE_A_TOKEN;
    return `not signed in: ${words(this.detail)} (${this.reason || this.codeName}; ${sent}). ${advice}`;
  }
}

/**
 * The caller is known but may not do this: its role in the club does not allow the call
 * (`reason` ROLE_FORBIDS, with the caller's `role` and the `rpc`), or it asked for more than
 * it may see.
 */
export class PermissionDeniedError extends TablelogError {
  override readonly name: string = "PermissionDeniedError";

  /** The caller's role in the club (ErrorInfo metadata "role"). */
  get role(): string | undefined {
    return this.metadata["role"];
  }

  /** The call that was refused (ErrorInfo metadata "rpc"). */
  get rpc(): string | undefined {
    return this.metadata["rpc"];
  }

  override explain(): string {
    const facts = [
      this.reason || this.codeName,
      ...(this.role === undefined ? [] : [`role ${this.role}`]),
      ...(this.rpc === undefined ? [] : [`call ${this.rpc}`]),
    ];
    return `not allowed: ${words(this.detail)} (${facts.join(", ")})`;
  }
}

const GIVE_A_TOKEN = "Give a token with the token option, $TABLELOG_TOKEN or `tablelog login`.";
const NEW_TOKEN = "Ask the club's owner for a new token and keep it with `tablelog login`.";

/** What to do about each refusal of a token. */
const AUTHENTICATION_ADVICE: Readonly<Record<string, string>> = {
  [TOKEN_MISSING]: GIVE_A_TOKEN,
  [TOKEN_UNKNOWN]: `Check the token (is it for this server?). ${NEW_TOKEN}`,
  [TOKEN_EXPIRED]: NEW_TOKEN,
  [TOKEN_REVOKED]: NEW_TOKEN,
};

/** The server's sentence without its full stop, to be followed by a parenthesis. */
function words(detail: string): string {
  return detail.replace(/\.$/, "");
}
