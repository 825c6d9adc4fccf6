// The npm packages as users get them, for the distribution tests: built by build/npm.ts from the release cache and
// packed with `npm pack`; and a registry on 127.0.0.1 serving them (every platform's manifest, this platform's
// tarball), so `npx -y awaitless` resolves and installs exactly as from the public registry, with no network.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  mainManifest,
  NPM_PLATFORMS,
  type NpmPlatform,
  packPackages,
  platformManifest,
  projectMeta,
  SCOPE,
  writePackages,
} from "../../build/npm.ts";
import { releaseCache } from "./release-fixture.ts";

/** This machine's npm platform, or undefined where the tests have no binary for it. */
export function hostPlatform(): NpmPlatform | undefined {
  const glibc = existsSync("/lib64/ld-linux-x86-64.so.2") || existsSync("/lib/ld-linux-aarch64.so.1");
  const name = `${process.platform}-${process.arch}${process.platform === "linux" && !glibc ? "-musl" : ""}`;
  return NPM_PLATFORMS.find((p) => p.name === name);
}

export interface Packed {
  /** The main package's tarball. */
  main: string;
  /** This platform's package tarball. */
  platform: string;
  platformName: string;
  version: string;
}

/** Builds and packs the main package and this platform's, into `dir`. */
export function packForHost(dir: string): Packed {
  const host = hostPlatform();
  if (!host) throw new Error(`no npm platform package for ${process.platform}-${process.arch}`);
  const cache = releaseCache([host.target.name]);
  mkdirSync(dir, { recursive: true });
  const w = writePackages(cache, join(dir, "pkgs"), [host]);
  const [platform, main] = packPackages(w, dir);
  return { main: main!, platform: platform!, platformName: host.name, version: projectMeta().version };
}

export interface FakeRegistry {
  url: string;
  /** Every path asked for, in order. */
  requests: string[];
  stop(): void;
}

const integrity = (bytes: Buffer) => `sha512-${createHash("sha512").update(bytes).digest("base64")}`;

/**
 * Serves the packuments of `awaitless` and of every `@awaitless/*` platform (manifests as build/npm.ts writes them),
 * with tarballs for the packed ones only: npm must never ask for another platform's.
 */
export function serveRegistry(p: Packed): FakeRegistry {
  const requests: string[] = [];
  const meta = projectMeta();
  const tarballs = new Map<string, Buffer>([
    ["awaitless", readFileSync(p.main)],
    [`${SCOPE}/${p.platformName}`, readFileSync(p.platform)],
  ]);
  const manifests = new Map<string, Record<string, unknown>>([
    ["awaitless", mainManifest(meta)],
    ...NPM_PLATFORMS.map((x) => [`${SCOPE}/${x.name}`, platformManifest(x, meta)] as const),
  ]);
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req): Response {
      const url = new URL(req.url);
      const path = decodeURIComponent(url.pathname);
      requests.push(path);
      const tgz = /^\/(.+)\/-\/[^/]+\.tgz$/.exec(path);
      if (tgz) {
        const bytes = tarballs.get(tgz[1]!);
        return bytes ? new Response(bytes) : new Response("not found\n", { status: 404 });
      }
      const m = manifests.get(path.slice(1));
      if (!m) return new Response('{"error":"not found"}\n', { status: 404 });
      const name = m.name as string;
      const file = `${name.split("/").pop()}-${meta.version}.tgz`;
      const bytes = tarballs.get(name);
      const dist = {
        tarball: `${url.origin}/${name}/-/${file}`,
        ...(bytes ? { integrity: integrity(bytes) } : {}),
      };
      return Response.json({
        name,
        "dist-tags": { latest: meta.version },
        versions: { [meta.version]: { ...m, dist } },
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/`, requests, stop: () => server.stop(true) };
}
