/**
 * Where the client's bearer token and TLS trust come from. The token is taken, first found
 * wins, from the `token` option, $TABLELOG_TOKEN, the credentials file every tablelog client
 * shares with the Python CLI (`tablelog login` writes it):
 *
 *   $XDG_CONFIG_HOME/tablelog/credentials.json   (default ~/.config/tablelog/credentials.json)
 *   {"servers": {"host:port": {"token": "..."}}}
 *
 * or, for a loopback address only, the local owner's token that `tablelog serve` writes to
 * `owner.token` in its data directory, as the Python CLI finds it.
 */
import { readFileSync, statSync } from "node:fs";
import { isIP } from "node:net";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

export const TOKEN_ENV = "TABLELOG_TOKEN";
export const DATA_DIR_ENV = "TABLELOG_DATA_DIR";
export const OWNER_TOKEN_FILE = "owner.token";
export const CA_ENV = "TABLELOG_CA";

/** Longer than any opaque token or JWT a server issues; anything longer is a mistake. */
export const MAX_TOKEN_LENGTH = 8192;
/** The credentials file and a CA bundle are small; a bigger file is not one of them. */
export const MAX_CREDENTIALS_FILE_BYTES = 1 << 20;

/** RFC 6750's b64token: what may follow "Bearer " in an authorization header. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** A token and where it was found, so that a refusal can say which token was refused. */
export interface ResolvedToken {
  token: string;
  /** "the token option", "$TABLELOG_TOKEN" or the credentials file's path. */
  source: string;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** The shared credentials file: $XDG_CONFIG_HOME/tablelog/credentials.json. */
export function credentialsPath(env: Environment = process.env): string {
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const configured = env["XDG_CONFIG_HOME"];
  const base =
    configured !== undefined && isAbsolute(configured)
      ? configured
      : join(env["HOME"] || homedir(), ".config");
  return join(base, "tablelog", "credentials.json");
}

/**
 * The token to send to `address`: the explicit one, else $TABLELOG_TOKEN, else the
 * credentials file's entry for the address. An empty value counts as not given. Throws when
 * the chosen token is malformed or the credentials file cannot be read as one.
 */
export function resolveToken(
  address: string,
  explicit: string | undefined,
  env: Environment = process.env,
): ResolvedToken | undefined {
  if (explicit !== undefined && explicit.trim() !== "") {
    return { token: checkToken(explicit, "the token option"), source: "the token option" };
  }
  const fromEnv = env[TOKEN_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== "") {
    return { token: checkToken(fromEnv, `$${TOKEN_ENV}`), source: `$${TOKEN_ENV}` };
  }
  const path = credentialsPath(env);
  const token = configuredToken(path, serverKey(address));
  if (token !== undefined) {
    return { token: checkToken(token, path), source: path };
  }
  return localOwnerToken(address, env);
}

/**
 * The data directory `tablelog serve` uses by default: $TABLELOG_DATA_DIR, else the platform's
 * user data directory for "tablelog" (Python's platformdirs.user_data_dir).
 */
export function serverDataDir(env: Environment = process.env): string {
  const configured = env[DATA_DIR_ENV];
  if (configured) {
    return configured;
  }
  const home = env["HOME"] || homedir();
  if (process.platform === "darwin") {
    return join(home, "Library", "Application Support", "tablelog");
  }
  if (process.platform === "win32") {
    return join(env["LOCALAPPDATA"] || join(home, "AppData", "Local"), "tablelog");
  }
  const data = env["XDG_DATA_HOME"];
  return join(data !== undefined && isAbsolute(data) ? data : join(home, ".local", "share"), "tablelog");
}

/** The local owner's token, for a server on this machine; undefined when there is none. */
function localOwnerToken(address: string, env: Environment): ResolvedToken | undefined {
  if (!isLoopback(serverKey(address))) {
    return undefined;
  }
  const path = join(serverDataDir(env), OWNER_TOKEN_FILE);
  let text: string | undefined;
  try {
    text = readBounded(path, "owner token file", true);
  } catch {
    // Another OS user's server: its token is not ours to read, and the server will say so.
    return undefined;
  }
  if (text === undefined || text.trim() === "") {
    return undefined;
  }
  return { token: checkToken(text, path), source: path };
}

/** The credentials file's token for a server, undefined when the file or entry is absent. */
function configuredToken(path: string, server: string): string | undefined {
  const text = readBounded(path, "credentials file", true);
  if (text === undefined) {
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`tablelog: ${path} is not JSON: ${(error as Error).message}`);
  }
  const servers = isObject(parsed) ? parsed["servers"] : undefined;
  if (!isObject(servers)) {
    throw new Error(`tablelog: ${path} has no "servers" object`);
  }
  if (!Object.hasOwn(servers, server)) {
    return undefined;
  }
  const entry = servers[server];
  const token = isObject(entry) ? entry["token"] : undefined;
  if (typeof token !== "string") {
    throw new Error(`tablelog: ${path}: servers["${server}"] has no "token" string`);
  }
  return token;
}

/** The token with surrounding whitespace removed, or an error naming where it came from. */
export function checkToken(token: string, source: string): string {
  const trimmed = token.trim();
  if (trimmed.length > MAX_TOKEN_LENGTH) {
    throw new Error(`tablelog: the token from ${source} is over ${MAX_TOKEN_LENGTH} characters`);
  }
  if (!BEARER_TOKEN.test(trimmed)) {
    throw new Error(
      `tablelog: the token from ${source} is not a bearer token ` +
        "(letters, digits and - . _ ~ + / only, then optional = padding)",
    );
  }
  return trimmed;
}

/** The CA bundle to trust: the explicit file, else $TABLELOG_CA; undefined for neither. */
export function resolveCa(
  explicit: string | undefined,
  env: Environment = process.env,
): { path: string; pem: Buffer } | undefined {
  const path = explicit || env[CA_ENV] || undefined;
  if (path === undefined) {
    return undefined;
  }
  const pem = readBounded(path, "CA file", false);
  return { path, pem: Buffer.from(pem ?? "", "utf-8") };
}

/** The "host:port" a credentials entry is keyed by: the address without a URL scheme or path. */
export function serverKey(address: string): string {
  const scheme = address.indexOf("://");
  const rest = scheme === -1 ? address : address.slice(scheme + 3);
  const slash = rest.indexOf("/");
  return slash === -1 ? rest : rest.slice(0, slash);
}

/** Whether "host:port" names this machine, where a plaintext connection stays local. */
export function isLoopback(server: string): boolean {
  let host = server;
  if (host.startsWith("[")) {
    host = host.slice(1, host.indexOf("]"));
  } else if (host.lastIndexOf(":") !== -1 && isIP(host) === 0) {
    host = host.slice(0, host.lastIndexOf(":"));
  }
  host = host.toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) {
    return true;
  }
  if (isIP(host) === 4) {
    return host.startsWith("127.");
  }
  return host === "::1" || host === "0:0:0:0:0:0:0:1";
}

function readBounded(path: string, what: string, missingIsAbsent: boolean): string | undefined {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (error) {
    if (missingIsAbsent && (error as NodeJS.ErrnoException).code === "ENOENT") {
      return undefined;
    }
    throw new Error(`tablelog: cannot read the ${what} ${path}: ${(error as Error).message}`);
  }
  if (size > MAX_CREDENTIALS_FILE_BYTES) {
    throw new Error(`tablelog: the ${what} ${path} is over ${MAX_CREDENTIALS_FILE_BYTES} bytes`);
  }
  try {
    return readFileSync(path, "utf-8");
  } catch (error) {
    throw new Error(`tablelog: cannot read the ${what} ${path}: ${(error as Error).message}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
