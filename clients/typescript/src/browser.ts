// The browser entry of @tablelog/client (package.json `exports`, condition "browser"): the
// generated messages and service descriptors of tablelog.v1 and the error type, with no
// Node-only import (no node:http2, node:fs, node:crypto), for a browser app that brings its
// own transport (`createConnectTransport` of @connectrpc/connect-web; the HTTP port speaks
// Connect and gRPC-Web). `TablelogClient` and the credentials file are Node's: they are in
// the Node entry (index.ts) only. The web app (clients/web) imports this entry.
export {
  PermissionDeniedError,
  ROLE_FORBIDS,
  TOKEN_EXPIRED,
  TOKEN_MISSING,
  TOKEN_REVOKED,
  TOKEN_UNKNOWN,
  TablelogError,
  UnauthenticatedError,
  codeName,
} from "./errors.js";
export * from "./gen/tablelog/v1/service_pb.js";
export * from "./gen/tablelog/v1/events_pb.js";
export * from "./gen/tablelog/v1/game_pb.js";
export * from "./gen/tablelog/v1/clubs_pb.js";
export * from "./gen/tablelog/v1/standings_pb.js";
