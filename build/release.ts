// Release builds: every target through build/build.ts into one directory, each also compressed with xz and
// with gzip, with SHA256SUMS (the three files of each target) and a size report. The .xz files need `xz`.
// Usage: bun build/release.ts [--outdir=DIR] [--only=linux-x64,darwin-arm64] [--fast]
// --fast: the same files with the quickest compression (xz -0, gzip -1), to check the pipeline; never for publishing.
// Bun fetches each cross-target runtime from the npm registry (cached under ~/.bun/install/cache).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";

export interface ReleaseTarget {
  /** Asset suffix: the file is `awaitless-<name>`. */
  name: string;
  /** bun build --target value. */
  bunTarget: string;
  os: "linux" | "darwin";
  arch: "x64" | "arm64";
  libc?: "glibc" | "musl";
  /** Runs on x86-64 CPUs without AVX2 (Bun's "baseline" builds). */
  baseline?: boolean;
}

export const TARGETS: readonly ReleaseTarget[] = [
  { name: "linux-x64", bunTarget: "bun-linux-x64", os: "linux", arch: "x64", libc: "glibc" },
  {
    name: "linux-x64-baseline",
    bunTarget: "bun-linux-x64-baseline",
    os: "linux",
    arch: "x64",
    libc: "glibc",
    baseline: true,
  },
  { name: "linux-arm64", bunTarget: "bun-linux-arm64", os: "linux", arch: "arm64", libc: "glibc" },
  { name: "linux-x64-musl", bunTarget: "bun-linux-x64-musl", os: "linux", arch: "x64", libc: "musl" },
  {
    name: "linux-x64-musl-baseline",
    bunTarget: "bun-linux-x64-musl-baseline",
    os: "linux",
    arch: "x64",
    libc: "musl",
    baseline: true,
  },
  { name: "linux-arm64-musl", bunTarget: "bun-linux-arm64-musl", os: "linux", arch: "arm64", libc: "musl" },
  { name: "darwin-arm64", bunTarget: "bun-darwin-arm64", os: "darwin", arch: "arm64" },
  { name: "darwin-x64", bunTarget: "bun-darwin-x64", os: "darwin", arch: "x64" },
];

export const assetName = (t: ReleaseTarget): string => `awaitless-${t.name}`;

export function sha256File(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** `sha256sum` format: "<hex>  <file>" per line, sorted by file name. */
export function renderSums(entries: { file: string; sha256: string }[]): string {
  return (
    [...entries]
      .sort((a, b) => a.file.localeCompare(b.file))
      .map((e) => `${e.sha256}  ${e.file}`)
      .join("\n") + "\n"
  );
}

export interface BinaryFormat {
  format: "elf" | "macho";
  arch: "x64" | "arm64" | "other";
  /** ELF only: the program interpreter (tells glibc from musl). */
  interpreter?: string;
}

/** Reads the executable header: ELF e_machine + PT_INTERP, or Mach-O 64 cputype. */
export function sniffBinary(bytes: Uint8Array): BinaryFormat {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dv.getUint32(0, false) === 0x7f454c46) {
    const machine = dv.getUint16(18, true);
    const arch = machine === 62 ? "x64" : machine === 183 ? "arm64" : "other";
    const phoff = Number(dv.getBigUint64(32, true));
    const phentsize = dv.getUint16(54, true);
    const phnum = dv.getUint16(56, true);
    for (let i = 0; i < phnum; i++) {
      const at = phoff + i * phentsize;
      if (dv.getUint32(at, true) !== 3) continue; // PT_INTERP
      const off = Number(dv.getBigUint64(at + 8, true));
      const size = Number(dv.getBigUint64(at + 32, true));
      const interpreter = Buffer.from(bytes.subarray(off, off + size))
        .toString("utf8")
        .replace(/\0+$/, "");
      return { format: "elf", arch, interpreter };
    }
    return { format: "elf", arch };
  }
  if (dv.getUint32(0, true) === 0xfeedfacf) {
    const cpu = dv.getUint32(4, true);
    return { format: "macho", arch: cpu === 0x01000007 ? "x64" : cpu === 0x0100000c ? "arm64" : "other" };
  }
  throw new Error("not an ELF or 64-bit Mach-O executable");
}

/** What a target's binary must look like; returns a problem sentence, or undefined when it matches. */
export function checkBinary(t: ReleaseTarget, f: BinaryFormat): string | undefined {
  const wantFormat = t.os === "linux" ? "elf" : "macho";
  if (f.format !== wantFormat) return `${t.name}: expected ${wantFormat}, got ${f.format}`;
  if (f.arch !== t.arch) return `${t.name}: expected ${t.arch}, got ${f.arch}`;
  if (t.os === "linux") {
    const musl = /ld-musl/.test(f.interpreter ?? "");
    if ((t.libc === "musl") !== musl)
      return `${t.name}: expected a ${t.libc} interpreter, got ${f.interpreter ?? "none"}`;
  }
  return undefined;
}

export interface BuiltAsset {
  target: ReleaseTarget;
  file: string;
  sizeBytes: number;
  sha256: string;
}

/** Builds one target with build/build.ts (same flags as the dev build), then checks its header. */
export function buildTarget(t: ReleaseTarget, outdir: string): BuiltAsset {
  const root = join(import.meta.dir, "..");
  const file = join(outdir, assetName(t));
  const tmp = `${file}.partial`;
  rmSync(tmp, { force: true });
  const proc = Bun.spawnSync(
    [process.execPath, join(root, "build", "build.ts"), `--target=${t.bunTarget}`, `--outfile=${tmp}`],
    { cwd: root, stdout: "pipe", stderr: "pipe" },
  );
  if (proc.exitCode !== 0) {
    rmSync(tmp, { force: true });
    const tail = (proc.stderr.toString() + proc.stdout.toString()).trim().split("\n").slice(-5).join("\n");
    throw new Error(`building ${t.name} (${t.bunTarget}) failed:\n${tail}`);
  }
  const problem = checkBinary(t, sniffBinary(readFileSync(tmp)));
  if (problem) {
    rmSync(tmp, { force: true });
    throw new Error(`built binary has the wrong format: ${problem}`);
  }
  renameSync(tmp, file);
  return { target: t, file, sizeBytes: statSync(file).size, sha256: sha256File(file) };
}

/**
 * The .xz settings: preset 6 (an 8 MiB dictionary: any unxz decodes it in about 10 MiB, busybox's included), one
 * thread (one block, the smallest file). Higher presets and the x86 filter save 2–3 % more, and busybox's unxz cannot
 * decode the filter; docs/install.md has the measurements.
 */
export const XZ_ARGS: readonly string[] = ["-6", "--threads=1"];
/** `--fast`: the quickest preset, one thread (a check of the pipeline: seconds a binary instead of a minute). */
export const XZ_FAST_ARGS: readonly string[] = ["-0", "--threads=1"];

/** `<asset>.xz` beside the binary, written by the `xz` on PATH. */
export async function xzAsset(
  file: string,
  args: readonly string[] = XZ_ARGS,
): Promise<{ file: string; sizeBytes: number; sha256: string }> {
  if (!Bun.which("xz"))
    throw new Error(
      "xz is not installed (the .xz assets need it): apt-get install xz-utils, or brew install xz",
    );
  const xz = `${file}.xz`;
  const proc = Bun.spawn(["sh", "-c", 'exec xz "$@" -c -- "$0" > "$0.xz.partial"', file, ...args], {
    stdout: "inherit",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) {
    rmSync(`${xz}.partial`, { force: true });
    throw new Error(`xz ${args.join(" ")} ${file} failed (${code}): ${stderr.trim()}`);
  }
  renameSync(`${xz}.partial`, xz);
  return { file: xz, sizeBytes: statSync(xz).size, sha256: sha256File(xz) };
}

/** `<asset>.gz` beside the binary (gzip -9: the 116 MB linux-x64 binary becomes about 54 MB; `--fast`: -1). */
export function gzipAsset(
  file: string,
  level: 1 | 9 = 9,
): { file: string; sizeBytes: number; sha256: string } {
  const gz = `${file}.gz`;
  writeFileSync(`${gz}.partial`, Bun.gzipSync(readFileSync(file), { level }));
  renameSync(`${gz}.partial`, gz);
  return { file: gz, sizeBytes: statSync(gz).size, sha256: sha256File(gz) };
}

/**
 * The Bun runtime's share of a target's binary: the size of a compiled hello world for the same target, built with
 * the same flags as build/build.ts (the binary minus this is our code: bundle, bytecode, embedded wrapper and pages).
 */
export function runtimeBytes(t: ReleaseTarget, dir: string): number {
  const src = join(dir, "runtime-probe.ts");
  const out = join(dir, `runtime-probe-${t.name}`);
  writeFileSync(src, 'console.log("hello");\n');
  const proc = Bun.spawnSync(
    [
      process.execPath,
      "build",
      "--compile",
      "--minify",
      "--bytecode",
      `--target=${t.bunTarget}`,
      src,
      "--outfile",
      out,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  try {
    if (proc.exitCode !== 0)
      throw new Error(`compiling a hello world for ${t.name} failed: ${proc.stderr.toString()}`);
    return statSync(out).size;
  } finally {
    rmSync(src, { force: true });
    rmSync(out, { force: true });
  }
}

export function selectTargets(only: string | undefined): ReleaseTarget[] {
  return selectNamed(TARGETS, only, "target");
}

/** The entries of `all` that `--only=a,b` names (all without it); an unknown name is refused with the list. */
export function selectNamed<T extends { name: string }>(
  all: readonly T[],
  only: string | undefined,
  what: string,
): T[] {
  if (!only) return [...all];
  const names = only.split(",").filter(Boolean);
  const unknown = names.filter((n) => !all.some((t) => t.name === n));
  if (unknown.length > 0)
    throw new Error(
      `unknown ${what}(s) ${unknown.join(", ")}; the ${what}s are ${all.map((t) => t.name).join(", ")}`,
    );
  return all.filter((t) => names.includes(t.name));
}

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** The arguments this script takes; anything else is refused by name (a mistyped `--fast` must not build slowly). */
export function unknownArgs(argv: readonly string[]): string[] {
  return argv.filter((a) => !/^--(outdir|only)=/.test(a) && a !== "--fast");
}

async function main(): Promise<number> {
  const unknown = unknownArgs(process.argv.slice(2));
  if (unknown.length > 0) {
    console.error(
      `error: unknown argument(s) ${unknown.join(" ")}\nhint: bun build/release.ts [--outdir=DIR] [--only=linux-x64,darwin-arm64] [--fast]`,
    );
    return 2;
  }
  const arg = (k: string) => process.argv.find((a) => a.startsWith(`--${k}=`))?.slice(k.length + 3);
  const outdir = resolve(arg("outdir") ?? join(import.meta.dir, "..", "dist"));
  const targets = selectTargets(arg("only"));
  const fast = process.argv.includes("--fast");
  mkdirSync(outdir, { recursive: true });
  const built: BuiltAsset[] = [];
  const sums: { file: string; sha256: string }[] = [];
  const failed: string[] = [];
  // xz takes minutes a binary: each runs in the background while the next target builds, a few at a time.
  const pending = new Set<Promise<void>>();
  const room = Math.max(1, availableParallelism() - 1);
  for (const t of targets) {
    const started = performance.now();
    try {
      const a = buildTarget(t, outdir);
      const gz = gzipAsset(a.file, fast ? 1 : 9);
      built.push(a);
      sums.push({ file: assetName(t), sha256: a.sha256 }, { file: `${assetName(t)}.gz`, sha256: gz.sha256 });
      const s = ((performance.now() - started) / 1000).toFixed(1);
      const ours = a.sizeBytes - runtimeBytes(t, outdir);
      console.log(`${assetName(t).padEnd(34)} ${mib(a.sizeBytes).padStart(10)}  ${a.sha256}  (${s} s)`);
      console.log(
        `${"".padEnd(34)} ${mib(ours).padStart(10)}  of it our code (the binary over the Bun runtime)`,
      );
      console.log(`${`${assetName(t)}.gz`.padEnd(34)} ${mib(gz.sizeBytes).padStart(10)}  ${gz.sha256}`);
      const job: Promise<void> = xzAsset(a.file, fast ? XZ_FAST_ARGS : XZ_ARGS)
        .then((xz) => {
          sums.push({ file: `${assetName(t)}.xz`, sha256: xz.sha256 });
          console.log(`${`${assetName(t)}.xz`.padEnd(34)} ${mib(xz.sizeBytes).padStart(10)}  ${xz.sha256}`);
        })
        .catch((e: Error) => {
          failed.push(`${t.name}: ${e.message}`);
          console.error(`${`${assetName(t)}.xz`.padEnd(34)} FAILED`);
        })
        .finally(() => pending.delete(job));
      pending.add(job);
      while (pending.size >= room) await Promise.race(pending);
    } catch (e) {
      failed.push(`${t.name}: ${(e as Error).message}`);
      console.error(`${assetName(t).padEnd(34)} FAILED`);
    }
  }
  await Promise.all(pending);
  writeFileSync(join(outdir, "SHA256SUMS"), renderSums(sums));
  const total = built.reduce((n, a) => n + a.sizeBytes, 0);
  console.log(`${built.length} binaries, ${mib(total)} in ${outdir} (checksums in SHA256SUMS)`);
  if (failed.length > 0) {
    console.error(`\n${failed.length} target(s) failed:\n${failed.join("\n")}`);
    console.error("hint: cross-target runtimes come from the npm registry; check network access and retry");
    return 1;
  }
  return 0;
}

if (import.meta.main) process.exit(await main());
