export {
  CLIENT_NAME,
  DEFAULT_ADDRESS,
  TablelogClient,
  describeToMove,
  viewer,
  type AmendOptions,
  type Amendment,
  type ClientOptions,
  type CreateGameOptions,
  type LegalMoves,
  type ListGamesFilter,
  type MoveInput,
  type RecordOptions,
  type RoleName,
  type Version,
  type ViewerSpec,
  type WatchItem,
  type WriteOptions,
} from "./client.js";
export {
  CA_ENV,
  TOKEN_ENV,
  credentialsPath,
  resolveToken,
  type ResolvedToken,
} from "./credentials.js";
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
