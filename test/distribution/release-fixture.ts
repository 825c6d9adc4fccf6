// Release binaries for the distribution tests (built once per dist/awaitless into a temp cache) and a
// loopback HTTP server laid out like GitHub releases: /latest/download/<asset>, /download/v<X>/<asset>.

import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildTarget, renderSums, sha256File, TARGETS } from "../../build/release.ts";

export const ROOT = join(import.meta.dir, "..", "..");
export const DEV_BINARY = join(ROOT, "dist", "awaitless");
export const INSTALL_SH = join(ROOT, "install.sh");
const CACHE_PREFIX = "awaitless-release-cache-";

export function requireDevBinary(): void {
  if (!existsSync(DEV_BINARY))
    throw new Error(`${DEV_BINARY} is missing: run \`bun run build\` first (npm test does it for you)`);
}

/**
 * A directory holding `awaitless-<name>` for each requested target, keyed by this checkout and the dev build's hash
 * so a source change rebuilds it; older caches of this checkout are removed, other checkouts' are left alone (a
 * machine shared by several clones). linux-x64 is the dev build itself (same flags, same host target).
 */
export function releaseCache(names: string[]): string {
  requireDevBinary();
  const mine = `${CACHE_PREFIX}${createHash("sha256").update(ROOT).digest("hex").slice(0, 8)}-`;
  const dir = join(tmpdir(), `${mine}${sha256File(DEV_BINARY).slice(0, 16)}`);
  for (const old of readdirSync(tmpdir())) {
    if (old.startsWith(mine) && join(tmpdir(), old) !== dir)
      rmSync(join(tmpdir(), old), { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true });
  for (const name of names) {
    const file = join(dir, `awaitless-${name}`);
    if (existsSync(file)) continue;
    if (name === "linux-x64") {
      copyFileSync(DEV_BINARY, `${file}.partial`);
      renameSync(`${file}.partial`, file);
      continue;
    }
    const target = TARGETS.find((t) => t.name === name);
    if (!target) throw new Error(`unknown release target ${name}`);
    buildTarget(target, dir);
  }
  return dir;
}

/** One release: asset name → file on disk; `sums` overrides SHA256SUMS (for tampering tests). */
export interface FakeRelease {
  assets: Record<string, string>;
  sums?: string;
}

export interface ReleaseServer {
  url: string;
  requests: string[];
  stop(): void;
}

function sumsOf(r: FakeRelease): string {
  return (
    r.sums ?? renderSums(Object.entries(r.assets).map(([file, path]) => ({ file, sha256: sha256File(path) })))
  );
}

/** Serves `releases` (by version without "v") and `latest` on 127.0.0.1; logs each request path. */
export function serveReleases(releases: Record<string, FakeRelease>, latest: string): ReleaseServer {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push(path);
      const m = path.match(/^\/(?:latest\/download|download\/v([^/]+))\/([^/]+)$/);
      const release = m ? releases[m[1] ?? latest] : undefined;
      if (!m || !release) return new Response("not found\n", { status: 404 });
      if (m[2] === "SHA256SUMS") return new Response(sumsOf(release));
      const file = release.assets[m[2]!];
      return file ? new Response(Bun.file(file)) : new Response("not found\n", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
}

/** Writes a release tree (same layout) into `dir`, for AWAITLESS_DOWNLOAD_URL=file://… */
export function writeReleaseTree(dir: string, version: string, r: FakeRelease): void {
  for (const sub of [join(dir, "download", `v${version}`), join(dir, "latest", "download")]) {
    mkdirSync(sub, { recursive: true });
    for (const [name, path] of Object.entries(r.assets)) copyFileSync(path, join(sub, name));
    writeFileSync(join(sub, "SHA256SUMS"), sumsOf(r));
  }
}

export function fileHash(path: string): string {
  return sha256File(path);
}

export const readText = (p: string): string => readFileSync(p, "utf8");
