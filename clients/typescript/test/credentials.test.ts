import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";

import { Code, ConnectError, createRouterTransport, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";

import {
  PermissionDeniedError,
  TablelogClient,
  TablelogError,
  UnauthenticatedError,
  credentialsPath,
  type ClientOptions,
} from "../src/index.js";
import { isLoopback, serverDataDir, serverKey } from "../src/credentials.js";
import { ErrorInfoSchema } from "../src/gen/google/rpc/error_details_pb.js";
import { TablelogService } from "../src/gen/tablelog/v1/service_pb.js";

type Impl = Partial<ServiceImpl<typeof TablelogService>>;

/** Answers GetGame, ReplayGame and WatchGame, writing down each call's authorization header. */
function capturingService(seen: string[]): Impl {
  return {
    getGame(_request, context) {
      seen.push(`getGame ${context.requestHeader.get("authorization")}`);
      return { game: { gameId: "g1" } };
    },
    async *replayGame(_request, context) {
      seen.push(`replayGame ${context.requestHeader.get("authorization")}`);
      yield {};
    },
    async *watchGame(_request, context) {
      seen.push(`watchGame ${context.requestHeader.get("authorization")}`);
      yield { item: { case: "heartbeat", value: { headRevision: 1n } } };
    },
  };
}

function refusal(code: Code, words: string, reason: string, metadata: Record<string, string>) {
  return new ConnectError(words, code, undefined, [
    { desc: ErrorInfoSchema, value: { reason, domain: "tablelog.v1", metadata } },
  ]);
}

/** The authorization header a client built with these options sends on GetGame. */
async function headerSent(options: ClientOptions): Promise<string> {
  const seen: string[] = [];
  const transport = createRouterTransport(({ service }) => {
    service(TablelogService, capturingService(seen));
  });
  await new TablelogClient({ ...options, transport }).getGame("g1");
  assert.equal(seen.length, 1);
  return seen[0]!.slice("getGame ".length);
}

/**
 * A scratch HOME, XDG_CONFIG_HOME and server data directory with no token in the
 * environment, restored after.
 */
function isolatedEnvironment(): { config: string; home: string; data: string } {
  const saved = { ...process.env };
  const root = mkdtempSync(join(tmpdir(), "tablelog-credentials-"));
  const dirs = { config: join(root, "config"), home: join(root, "home"), data: join(root, "data") };
  mkdirSync(dirs.config);
  mkdirSync(dirs.home);
  beforeEach(() => {
    process.env["HOME"] = dirs.home;
    process.env["XDG_CONFIG_HOME"] = dirs.config;
    process.env["TABLELOG_DATA_DIR"] = dirs.data;
    delete process.env["TABLELOG_TOKEN"];
    delete process.env["TABLELOG_CA"];
    for (const dir of [join(dirs.config, "tablelog"), join(dirs.home, ".config"), dirs.data]) {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  afterEach(() => {
    for (const key of Object.keys(process.env)) {
      if (!(key in saved)) delete process.env[key];
    }
    Object.assign(process.env, saved);
  });
  after(() => rmSync(root, { recursive: true, force: true }));
  return dirs;
}

function writeCredentials(path: string, content: unknown): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content), {
    mode: 0o600,
  });
}

// Every test runs with a scratch HOME and XDG_CONFIG_HOME: none sees the developer's tokens.
const dirs = isolatedEnvironment();

describe("the token", () => {
  const file = () => join(dirs.config, "tablelog", "credentials.json");

  it("is sent as a bearer token on unary calls and on both streams", async () => {
    const seen: string[] = [];
    const transport = createRouterTransport(({ service }) => {
      service(TablelogService, capturingService(seen));
    });
    const client = new TablelogClient({ transport, token: "tl_abc-DEF.123" });
    await client.getGame("g1");
    for await (const _item of client.replay("g1")) {
      // drained
    }
    for await (const _item of client.watch("g1")) {
      break;
    }
    assert.deepEqual(seen, [
      "getGame Bearer tl_abc-DEF.123",
      "replayGame Bearer tl_abc-DEF.123",
      "watchGame Bearer tl_abc-DEF.123",
    ]);
  });

  it("is not sent when none is configured anywhere", async () => {
    assert.equal(await headerSent({ address: "127.0.0.1:50051" }), "null");
  });

  it("is looked up in the credentials file by the server's host:port", async () => {
    writeCredentials(file(), {
      servers: { "club.example:443": { token: "from-file" }, "127.0.0.1:50051": { token: "local" } },
    });
    assert.equal(await headerSent({ address: "club.example:443" }), "Bearer from-file");
    assert.equal(await headerSent({ address: "https://club.example:443" }), "Bearer from-file");
    assert.equal(await headerSent({ address: "127.0.0.1:50051" }), "Bearer local");
    assert.equal(await headerSent({ address: "127.0.0.1:50052" }), "null");
    const client = new TablelogClient({
      address: "127.0.0.1:50051",
      transport: createRouterTransport(() => {}),
    });
    assert.equal(client.tokenSource, file());
  });

  it("takes the option over $TABLELOG_TOKEN over the credentials file", async () => {
    writeCredentials(file(), { servers: { "127.0.0.1:50051": { token: "from-file" } } });
    const address = "127.0.0.1:50051";
    process.env["TABLELOG_TOKEN"] = "from-env";
    assert.equal(await headerSent({ address, token: "from-option" }), "Bearer from-option");
    assert.equal(await headerSent({ address }), "Bearer from-env");
    process.env["TABLELOG_TOKEN"] = "";
    assert.equal(await headerSent({ address }), "Bearer from-file", "an empty variable is unset");
  });

  it("falls back to the local server's owner token, for loopback only", async () => {
    writeCredentials(join(dirs.data, "owner.token"), "tl_owner\n");
    writeCredentials(file(), { servers: { "127.0.0.1:50051": { token: "from-file" } } });
    assert.equal(await headerSent({ address: "127.0.0.1:50051" }), "Bearer from-file");
    assert.equal(await headerSent({ address: "127.0.0.1:50052" }), "Bearer tl_owner");
    assert.equal(await headerSent({ address: "localhost:50052" }), "Bearer tl_owner");
    assert.equal(await headerSent({ address: "club.example:50052" }), "null");
    process.env["TABLELOG_TOKEN"] = "from-env";
    assert.equal(await headerSent({ address: "127.0.0.1:50052" }), "Bearer from-env");
    delete process.env["TABLELOG_TOKEN"];
    writeCredentials(join(dirs.data, "owner.token"), "");
    assert.equal(await headerSent({ address: "127.0.0.1:50052" }), "null", "an empty file is none");
    if (process.platform === "linux") {
      delete process.env["TABLELOG_DATA_DIR"];
      process.env["XDG_DATA_HOME"] = dirs.data;
      assert.equal(serverDataDir(), join(dirs.data, "tablelog"));
    }
  });

  it("reads ~/.config when XDG_CONFIG_HOME is unset or relative", async () => {
    const home = join(dirs.home, ".config", "tablelog", "credentials.json");
    writeCredentials(home, { servers: { "127.0.0.1:50051": { token: "in-home" } } });
    delete process.env["XDG_CONFIG_HOME"];
    assert.equal(credentialsPath(), home);
    assert.equal(await headerSent({ address: "127.0.0.1:50051" }), "Bearer in-home");
    process.env["XDG_CONFIG_HOME"] = "relative/config";
    assert.equal(credentialsPath(), home);
  });

  it("refuses a malformed token or credentials file, naming where it came from", () => {
    const transport = createRouterTransport(() => {});
    process.env["TABLELOG_TOKEN"] = "two words";
    assert.throws(() => new TablelogClient({ transport }), /\$TABLELOG_TOKEN is not a bearer token/);
    assert.throws(
      () => new TablelogClient({ transport, token: `x${"y".repeat(9000)}` }),
      /the token option is over 8192 characters/,
    );
    delete process.env["TABLELOG_TOKEN"];
    const address = "127.0.0.1:50051";
    writeCredentials(file(), "{not json");
    assert.throws(() => new TablelogClient({ transport, address }), /credentials\.json is not JSON/);
    writeCredentials(file(), { servers: { [address]: { token: 7 } } });
    assert.throws(() => new TablelogClient({ transport, address }), /has no "token" string/);
    writeCredentials(file(), { servers: [] });
    assert.throws(() => new TablelogClient({ transport, address }), /no "servers" object/);
    writeCredentials(file(), { servers: {} });
    assert.equal(new TablelogClient({ transport, address: "__proto__" }).tokenSource, undefined);
    writeCredentials(file(), "x".repeat((1 << 20) + 1));
    assert.throws(() => new TablelogClient({ transport, address }), /is over 1048576 bytes/);
  });

  it("goes over plaintext only to this machine unless allowed", () => {
    for (const address of ["10.1.2.3:50051", "club.example:50051", "http://club.example:50051"]) {
      assert.throws(
        () => new TablelogClient({ address, token: "t" }),
        /refusing to send a token in plaintext/,
        address,
      );
      new TablelogClient({ address, token: "t", allowInsecure: true });
      new TablelogClient({ address });
    }
    for (const address of ["127.0.0.1:50051", "localhost:1", "[::1]:50051", "127.8.9.1:5"]) {
      new TablelogClient({ address, token: "t" });
    }
    new TablelogClient({ address: "https://club.example:443", token: "t" });
  });
});

describe("addresses", () => {
  it("keys the credentials file by host:port", () => {
    assert.equal(serverKey("club.example:443"), "club.example:443");
    assert.equal(serverKey("https://club.example:443/"), "club.example:443");
    assert.equal(serverKey("http://[::1]:50051"), "[::1]:50051");
  });

  it("tells loopback from the network", () => {
    for (const local of ["127.0.0.1:1", "localhost:1", "LOCALHOST:1", "[::1]:1", "a.localhost:1"]) {
      assert.ok(isLoopback(local), local);
    }
    for (const remote of ["10.0.0.1:1", "[::2]:1", "localhost.example:1", "127.example:1"]) {
      assert.ok(!isLoopback(remote), remote);
    }
  });
});

describe("refusals", () => {
  it("surfaces UNAUTHENTICATED with the reason, the server's words and the token's source", async () => {
    const transport = createRouterTransport(({ service }) => {
      service(TablelogService, {
        getGame() {
          throw refusal(Code.Unauthenticated, "the token expired on 2026-11-30", "TOKEN_EXPIRED", {});
        },
        async *watchGame() {
          throw refusal(Code.Unauthenticated, "no token was given", "TOKEN_MISSING", {});
        },
      });
    });
    const client = new TablelogClient({ transport, token: "old" });
    await assert.rejects(client.getGame("g1"), (error: unknown) => {
      assert.ok(error instanceof UnauthenticatedError);
      assert.ok(error instanceof TablelogError);
      assert.equal(error.codeName, "UNAUTHENTICATED");
      assert.equal(error.reason, "TOKEN_EXPIRED");
      assert.equal(error.detail, "the token expired on 2026-11-30");
      assert.equal(error.tokenSource, "the token option");
      assert.equal(
        error.explain(),
        "not signed in: the token expired on 2026-11-30 (TOKEN_EXPIRED; the token came from the " +
          "token option). Ask the club's owner for a new token and keep it with `tablelog login`.",
      );
      return true;
    });
    await assert.rejects(
      (async () => {
        for await (const _item of client.watch("g1")) {
          // the stream is refused before its first item
        }
      })(),
      (error: unknown) =>
        error instanceof UnauthenticatedError &&
        error.reason === "TOKEN_MISSING" &&
        error.explain().startsWith("not signed in: no token was given (TOKEN_MISSING; the token came"),
    );
  });

  it("surfaces PERMISSION_DENIED with the role and the call", async () => {
    const transport = createRouterTransport(({ service }) => {
      service(TablelogService, {
        recordMove() {
          throw refusal(
            Code.PermissionDenied,
            "A spectator may only look.",
            "ROLE_FORBIDS",
            { role: "spectator", rpc: "RecordMove" },
          );
        },
        async *replayGame() {
          throw refusal(Code.PermissionDenied, "seat 0 is not yours", "VIEW_FORBIDDEN", {});
        },
      });
    });
    const client = new TablelogClient({ transport, token: "t" });
    await assert.rejects(client.record("g1", "take w u g", { expectedVersion: 3 }), (error: unknown) => {
      assert.ok(error instanceof PermissionDeniedError);
      assert.equal(error.reason, "ROLE_FORBIDS");
      assert.equal(error.role, "spectator");
      assert.equal(error.rpc, "RecordMove");
      assert.equal(error.detail, "A spectator may only look.");
      assert.equal(
        error.explain(),
        "not allowed: A spectator may only look (ROLE_FORBIDS, role spectator, call RecordMove)",
      );
      return true;
    });
    await assert.rejects(
      (async () => {
        for await (const _item of client.replay("g1", { viewer: { seat: 0 } })) {
          // refused before the first item
        }
      })(),
      (error: unknown) =>
        error instanceof PermissionDeniedError &&
        error.role === undefined &&
        error.explain() === "not allowed: seat 0 is not yours (VIEW_FORBIDDEN)",
    );
  });

  it("keeps other codes as plain TablelogErrors", async () => {
    const transport = createRouterTransport(({ service }) => {
      service(TablelogService, {
        getGame() {
          throw refusal(Code.NotFound, "no such game", "GAME_NOT_FOUND", {});
        },
      });
    });
    await assert.rejects(new TablelogClient({ transport }).getGame("g1"), (error: unknown) => {
      assert.ok(error instanceof TablelogError);
      assert.ok(!(error instanceof UnauthenticatedError) && !(error instanceof PermissionDeniedError));
      assert.equal(error.explain(), "NOT_FOUND (GAME_NOT_FOUND): no such game");
      return true;
    });
  });
});

const openssl = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("over TLS", { skip: !openssl && !process.env["CI"] ? "openssl not installed" : false }, () => {
  let dir = "";
  let server: Http2SecureServer;
  let address = "";
  const seen: string[] = [];
  const sessions = new Set<ServerHttp2Session>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "tablelog-tls-"));
    // A throwaway self-signed certificate for this machine, made for this run only.
    execFileSync(
      "openssl",
      [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1",
        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
    const impl: Impl = {
      ...capturingService(seen),
      recordMove() {
        throw refusal(Code.PermissionDenied, "a spectator may only look", "ROLE_FORBIDS", {
          role: "spectator",
          rpc: "RecordMove",
        });
      },
    };
    server = createSecureServer(
      { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
      connectNodeAdapter({ routes: (router) => router.service(TablelogService, impl) }),
    );
    server.on("session", (session) => sessions.add(session));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    address = `localhost:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    // The clients keep their HTTP/2 sessions open for reuse; close() alone would wait for them.
    for (const session of sessions) session.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("verifies the server with the CA and carries the token and the refusal details", async () => {
    seen.length = 0;
    const client = new TablelogClient({ address, token: "tls-token", ca: join(dir, "cert.pem") });
    assert.equal((await client.getGame("g1")).gameId, "g1");
    for await (const _item of client.replay("g1")) {
      // drained
    }
    assert.deepEqual(seen, ["getGame Bearer tls-token", "replayGame Bearer tls-token"]);
    await assert.rejects(client.record("g1", "take w u g", { expectedVersion: 1 }), (error: unknown) =>
      error instanceof PermissionDeniedError && error.rpc === "RecordMove" && error.role === "spectator",
    );
  });

  it("takes the CA from $TABLELOG_CA", async () => {
    process.env["TABLELOG_CA"] = join(dir, "cert.pem");
    assert.equal((await new TablelogClient({ address }).getGame("g1")).gameId, "g1");
  });

  it("fails without the CA and over plaintext, and refuses a missing CA file", async () => {
    const untrusted = new TablelogClient({ address: `https://${address}`, token: "t" });
    await assert.rejects(untrusted.getGame("g1"), (error: unknown) => {
      assert.ok(error instanceof TablelogError);
      assert.match(error.detail, /certificate/);
      return true;
    });
    await assert.rejects(new TablelogClient({ address, timeoutMs: 2_000 }).getGame("g1"), TablelogError);
    assert.throws(
      () => new TablelogClient({ address, ca: join(dir, "missing.pem") }),
      /cannot read the CA file/,
    );
    assert.throws(
      () => new TablelogClient({ address: `http://${address}`, ca: join(dir, "cert.pem") }),
      /a CA .* means TLS/,
    );
  });
});
