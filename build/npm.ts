// npm packages from the release binaries: `awaitless` (a sh launcher; the platform packages are its optional
// dependencies, so npm fetches only the one for this OS, CPU and C library, with no install script) and one
// `@awaitless/<platform>` per platform holding that binary.
// Usage: bun build/npm.ts [--from=DIR] [--outdir=DIR] [--only=linux-x64,darwin-arm64] [--pack]
//   --from    the release binaries (awaitless-<target>, as build/release.ts writes them; default dist/)
//   --outdir  where the package directories go (default dist/npm); --pack also writes their tarballs there
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { assetName, checkBinary, type ReleaseTarget, selectNamed, sniffBinary, TARGETS } from "./release.ts";

const ROOT = join(import.meta.dir, "..");
export const SCOPE = "@awaitless";
export const MAIN = "awaitless";
/** The launcher's source; it is the main package's `bin/awaitless`. */
export const LAUNCHER = join(ROOT, "npm", "launcher.sh");

export interface NpmPlatform {
  /** `@awaitless/<name>`, the directory the launcher looks for. */
  name: string;
  /** The release target whose binary it holds. */
  target: ReleaseTarget;
  os: "linux" | "darwin";
  cpu: "x64" | "arm64";
  libc?: "glibc" | "musl";
  /** What npm's page says it is for. */
  label: string;
}

const target = (name: string): ReleaseTarget => {
  const t = TARGETS.find((x) => x.name === name);
  if (!t) throw new Error(`build/npm.ts names release target ${name}, which build/release.ts does not build`);
  return t;
};

/**
 * One package per OS, CPU and C library: npm chooses by those three and cannot tell a CPU with AVX2 from one
 * without, so the x86-64 Linux packages hold the baseline builds, which run on every x86-64 CPU (and start as
 * fast: docs/install.md).
 */
export const NPM_PLATFORMS: readonly NpmPlatform[] = [
  {
    name: "linux-x64",
    target: target("linux-x64-baseline"),
    os: "linux",
    cpu: "x64",
    libc: "glibc",
    label: "Linux x86-64 (glibc)",
  },
  {
    name: "linux-arm64",
    target: target("linux-arm64"),
    os: "linux",
    cpu: "arm64",
    libc: "glibc",
    label: "Linux arm64 (glibc)",
  },
  {
    name: "linux-x64-musl",
    target: target("linux-x64-musl-baseline"),
    os: "linux",
    cpu: "x64",
    libc: "musl",
    label: "Linux x86-64 (musl: Alpine)",
  },
  {
    name: "linux-arm64-musl",
    target: target("linux-arm64-musl"),
    os: "linux",
    cpu: "arm64",
    libc: "musl",
    label: "Linux arm64 (musl: Alpine)",
  },
  {
    name: "darwin-arm64",
    target: target("darwin-arm64"),
    os: "darwin",
    cpu: "arm64",
    label: "macOS on Apple silicon",
  },
  { name: "darwin-x64", target: target("darwin-x64"), os: "darwin", cpu: "x64", label: "macOS on Intel" },
];

export interface ProjectMeta {
  version: string;
  description: string;
  license: string;
  /** https://github.com/OWNER/awaitless */
  repository: string;
  /** The MCP Registry's name of the server (server.json), which the registry checks against `mcpName`. */
  mcpName: string;
}

export function projectMeta(root = ROOT): ProjectMeta {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const server = JSON.parse(readFileSync(join(root, "server.json"), "utf8"));
  return {
    version: pkg.version,
    description: pkg.description,
    license: pkg.license,
    repository: server.repository.url,
    mcpName: server.name,
  };
}

const repositoryOf = (m: ProjectMeta) => ({ type: "git", url: `git+${m.repository}.git` });

/** The main package: the launcher under three names (0.8's server commands too), every platform optional. */
export function mainManifest(m: ProjectMeta): Record<string, unknown> {
  return {
    name: MAIN,
    version: m.version,
    description: m.description,
    license: m.license,
    repository: repositoryOf(m),
    homepage: m.repository,
    mcpName: m.mcpName,
    keywords: ["mcp", "mcp-server", "jobs", "ssh", "slurm", "agents", "cli"],
    bin: {
      awaitless: "bin/awaitless",
      "awaitless-mcp": "bin/awaitless",
      "awaitless-runner": "bin/awaitless",
    },
    files: ["bin/awaitless"],
    os: [...new Set(NPM_PLATFORMS.map((p) => p.os))],
    cpu: [...new Set(NPM_PLATFORMS.map((p) => p.cpu))],
    optionalDependencies: Object.fromEntries(NPM_PLATFORMS.map((p) => [`${SCOPE}/${p.name}`, m.version])),
  };
}

export function platformManifest(p: NpmPlatform, m: ProjectMeta): Record<string, unknown> {
  return {
    name: `${SCOPE}/${p.name}`,
    version: m.version,
    description: `The awaitless binary for ${p.label}; installed by the awaitless package.`,
    license: m.license,
    repository: repositoryOf(m),
    homepage: m.repository,
    os: [p.os],
    cpu: [p.cpu],
    ...(p.libc ? { libc: [p.libc] } : {}),
    files: ["bin/awaitless"],
    preferUnplugged: true,
  };
}

export function selectPlatforms(only: string | undefined): NpmPlatform[] {
  return selectNamed(NPM_PLATFORMS, only, "npm platform");
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

export interface WrittenPackages {
  main: string;
  platforms: { platform: NpmPlatform; dir: string }[];
}

/** Writes the main package and the chosen platform packages into `outdir`, each binary's header checked first. */
export function writePackages(
  from: string,
  outdir: string,
  platforms: NpmPlatform[],
  m = projectMeta(),
): WrittenPackages {
  const missing = platforms.filter((p) => !existsSync(join(from, assetName(p.target))));
  if (missing.length > 0)
    throw new Error(
      `${from} lacks ${missing.map((p) => assetName(p.target)).join(", ")}; build them with bun build/release.ts --only=${missing.map((p) => p.target.name).join(",")}, or pass --only= for the platforms you have`,
    );
  const mainDir = join(outdir, MAIN);
  rmSync(mainDir, { recursive: true, force: true });
  mkdirSync(join(mainDir, "bin"), { recursive: true });
  copyFileSync(LAUNCHER, join(mainDir, "bin", "awaitless"));
  chmodSync(join(mainDir, "bin", "awaitless"), 0o755);
  copyFileSync(join(ROOT, "npm", "README.md"), join(mainDir, "README.md"));
  writeJson(join(mainDir, "package.json"), mainManifest(m));
  const written: WrittenPackages["platforms"] = [];
  for (const p of platforms) {
    const binary = join(from, assetName(p.target));
    const problem = checkBinary(p.target, sniffBinary(readFileSync(binary)));
    if (problem) throw new Error(`${binary} is not the ${p.target.name} build: ${problem}`);
    const dir = join(outdir, SCOPE, p.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, "bin"), { recursive: true });
    copyFileSync(binary, join(dir, "bin", "awaitless"));
    chmodSync(join(dir, "bin", "awaitless"), 0o755);
    writeFileSync(
      join(dir, "README.md"),
      `# ${SCOPE}/${p.name}\n\nThe \`awaitless\` binary for ${p.label} (the \`${assetName(p.target)}\` release asset). Install the \`awaitless\` package instead: it depends on this one where it fits (\`npm i -g awaitless\`, or \`npx -y awaitless mcp\`). See ${m.repository}.\n`,
    );
    writeJson(join(dir, "package.json"), platformManifest(p, m));
    written.push({ platform: p, dir });
  }
  return { main: mainDir, platforms: written };
}

/** `npm pack` of each package directory into `dest`; returns the tarballs (platforms first, then the main one). */
export function packPackages(w: WrittenPackages, dest: string, npm = "npm"): string[] {
  const tarballs: string[] = [];
  for (const dir of [...w.platforms.map((p) => p.dir), w.main]) {
    const r = Bun.spawnSync([npm, "pack", "--json", "--pack-destination", dest, dir], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" },
    });
    if (r.exitCode !== 0) throw new Error(`npm pack ${dir} failed: ${r.stderr.toString().trim()}`);
    const [info] = JSON.parse(r.stdout.toString()) as { filename: string }[];
    tarballs.push(join(dest, info!.filename));
  }
  return tarballs;
}

function main(): number {
  const arg = (k: string) => process.argv.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3);
  const known = /^--(from|outdir|only)=|^--pack$/;
  const bad = process.argv.slice(2).filter((a) => !known.test(a));
  if (bad.length > 0) {
    console.error(
      `unknown argument(s) ${bad.join(" ")}\nusage: bun build/npm.ts [--from=DIR] [--outdir=DIR] [--only=PLATFORMS] [--pack]`,
    );
    return 2;
  }
  const from = resolve(arg("from") ?? join(ROOT, "dist"));
  const outdir = resolve(arg("outdir") ?? join(ROOT, "dist", "npm"));
  try {
    const w = writePackages(from, outdir, selectPlatforms(arg("only")));
    for (const d of [w.main, ...w.platforms.map((p) => p.dir)]) console.log(d);
    if (process.argv.includes("--pack")) for (const t of packPackages(w, outdir)) console.log(t);
    return 0;
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    return 1;
  }
}

if (import.meta.main) process.exit(main());
