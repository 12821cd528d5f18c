// Bundles the web app into content-hashed assets and writes index.html naming them.
//
//   node build.mjs --outdir DIR
//
// scripts/build_webapp.py runs this (after type-checking) and puts DIR's files into
// service/webapp/, or compares them with it (--check). The output depends only on the sources
// and the versions package-lock.json pins: the same tree always builds the same bytes.
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const HERE = dirname(fileURLToPath(import.meta.url));
const ASSETS = "assets";

function outdirArgument(argv) {
  const at = argv.indexOf("--outdir");
  if (at === -1 || at + 1 >= argv.length) {
    console.error("usage: node build.mjs --outdir DIR");
    process.exit(2);
  }
  return resolve(argv[at + 1]);
}

// The client package (@tablelog/client, a link to clients/typescript: one source of truth)
// is read by its browser entry; its bare imports (@bufbuild/protobuf) must resolve to this
// app's node_modules, so that one copy of the runtime is bundled whether or not
// clients/typescript has node_modules of its own.
const runtimeFromThisApp = {
  name: "runtime-from-this-app",
  setup(build) {
    build.onResolve({ filter: /^@(bufbuild|connectrpc)\// }, async (args) => {
      if (args.resolveDir === HERE || args.resolveDir.startsWith(HERE + sep)) {
        return undefined;
      }
      const found = await build.resolve(args.path, { kind: args.kind, resolveDir: HERE });
      return found.errors.length ? { errors: found.errors } : { path: found.path };
    });
  },
};

const outdir = outdirArgument(process.argv);
const result = await esbuild.build({
  absWorkingDir: HERE,
  entryPoints: ["src/main.ts", "src/style.css"],
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022", "chrome110", "firefox115", "safari16"],
  outdir: join(outdir, ASSETS),
  // Named by the hash of their bytes below: esbuild's own [hash] is not stable from one run
  // to the next here, for byte-identical output (seen with this build's resolve plugin).
  entryNames: "[name]",
  metafile: true,
  legalComments: "none",
  charset: "utf8",
  // tsconfig.json is for `tsc` (its paths point at type declarations); bundling needs none.
  tsconfigRaw: {},
  plugins: [runtimeFromThisApp],
  // With the platform's "browser" (esbuild's default platform): the client package's browser
  // entry as TypeScript source (its package.json `exports`), so it needs no build of its own.
  conditions: ["@tablelog/source"],
  logLevel: "warning",
});

const built = {};
for (const [path, output] of Object.entries(result.metafile.outputs)) {
  if (!output.entryPoint) {
    continue;
  }
  const file = resolve(HERE, path);
  const digest = createHash("sha256").update(await readFile(file)).digest("hex").slice(0, 12);
  const dot = file.lastIndexOf(".");
  const hashed = `${file.slice(0, dot)}-${digest}${file.slice(dot)}`;
  await rename(file, hashed);
  built[basename(output.entryPoint)] = "/" + relative(outdir, hashed).split(sep).join("/");
}
const template = await readFile(join(HERE, "index.html"), "utf-8");
const page = template
  .replace("{{script}}", built["main.ts"])
  .replace("{{style}}", built["style.css"]);
if (page.includes("{{")) {
  throw new Error("index.html names an asset the build did not make");
}
await mkdir(outdir, { recursive: true });
await writeFile(join(outdir, "index.html"), page, "utf-8");
console.log(`built ${Object.values(built).join(", ")} and /index.html`);
