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

/**
 * An error returned by the tablelog server. `reason` is the stable reason of the
 * google.rpc.ErrorInfo detail (ILLEGAL_MOVE, STALE_VERSION, GAME_NOT_FOUND, ...), `metadata`
 * its metadata ("rule", "current_version", ...). Transport failures have an empty reason.
 */
export class TablelogError extends Error {
  override readonly name = "TablelogError";
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

  /** Converts anything thrown by a call into a TablelogError (other errors pass through). */
  static from(error: unknown): unknown {
    if (error instanceof TablelogError) {
      return error;
    }
    if (error instanceof ConnectError) {
      return new TablelogError(error);
    }
    return error;
  }
}
