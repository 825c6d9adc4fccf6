// SSH artifact manifests against a private OpenSSH sshd on 127.0.0.1 (the host is this machine): for the same tree,
// the manifest collected over SSH equals collectLocalArtifacts' apart from `remote`, as the dash user and as the
// busybox user whose PATH (sshd SetEnv) holds busybox applets only. Collected through the Slurm SSH runner, which
// calls the same collector as the SSH backend.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectLocalArtifacts } from "../../src/backends/local/artifacts-local.ts";
import type { SshRunner } from "../../src/backends/slurm/ssh-runner.ts";
import type { ArtifactEntry } from "../../src/core/model/job.ts";
import { busyboxAppletDir } from "../helpers/busybox.ts";
import {
  gateOnAvailability,
  type SshdHandle,
  sshdAvailable,
  startSshd,
  TEST_USERS,
} from "../helpers/sshd.ts";
import { sshRunner } from "./slurm-ssh-rig.ts";

const runE2e = gateOnAvailability("SSH artifact e2e tests (private OpenSSH server)", sshdAvailable());

let sshd: SshdHandle;
let base: string;
let cwd: string;
let busyboxBin: string;

function write(rel: string, content: string): void {
  const abs = join(cwd, rel);
  mkdirSync(join(abs, ".."), { recursive: true });
  writeFileSync(abs, content);
}

function buildTree(): void {
  cwd = join(base, "job");
  const outside = join(base, "outside");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.json"), '{"leak":true}');
  write("metrics.json", '{"loss":0.25,"ok":true}');
  write("bad.json", "{not json");
  write("big.json", JSON.stringify({ data: "x".repeat(500) }));
  write("notes.txt", "hello\n");
  write("results/r0.json", "[0]");
  write("results/a/r1.json", '{"n":1}');
  write("results/a/b/c/r2.json", '{"n":2}');
  write("results/a/r3.txt", "three");
  write("results/.cache/hidden.json", "{}");
  write("results/.top.json", "{}");
  write("out/x.json", "1");
  write("out/y.txt", "y");
  write("out/deep/z.bin", "z");
  write("with space.json", '{"space":true}');
  write("st*r.json", "2");
  mkdirSync(join(cwd, "empty"));
  symlinkSync(join(outside, "secret.json"), join(cwd, "escape.json"));
  symlinkSync(outside, join(cwd, "outdir"));
  symlinkSync(join(cwd, "metrics.json"), join(cwd, "latest.json"));
  symlinkSync(join(cwd, "missing-target"), join(cwd, "dangling.json"));
  const t = new Date("2024-05-06T07:08:09.123Z");
  utimesSync(join(cwd, "notes.txt"), t, t);
}

if (runE2e) {
  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), "awl-ssh-artifacts-"));
    chmodSync(base, 0o755); // the test users read the tree and the busybox applet directory
    busyboxBin = busyboxAppletDir(join(base, "busybox-bin")) as string;
    buildTree();
    sshd = await startSshd({
      extraConfig: [`Match User ${TEST_USERS.busybox}`, `  SetEnv PATH=${busyboxBin}`],
    });
  });
  afterAll(async () => {
    await sshd?.stop();
    if (base) rmSync(base, { recursive: true, force: true });
  });
}

const DECLARATIONS = [
  "results/**/*.json",
  "**/*.json",
  "*.json",
  "{out,results}/*.{json,txt}",
  "out",
  "./out/../notes.txt",
  "results/.*.json",
  "outdir/*.json",
  "escape.json",
  "dangling.json",
  "latest.json",
  "../outside/secret.json",
  "empty",
  "nothing-here",
  "*.parquet",
  "st\\*r.json",
  "with space.json",
  "n?tes.t[xy]t",
];

const withoutRemote = (entries: ArtifactEntry[]) => entries.map((e) => ({ ...e, remote: false }));

describe.each(runE2e ? (["dash", "busybox"] as const) : [])("artifacts over SSH as the %s user", (kind) => {
  let runner: SshRunner;
  beforeAll(() => {
    runner = sshRunner(sshd, sshd.users[kind]);
  });
  afterAll(() => runner?.close());

  test("the remote shell finds the utilities it is meant to", async () => {
    const r = await runner.exec(["sh", "-c", "command -v find; command -v sha256sum"], { timeoutMs: 15_000 });
    expect(r.code).toBe(0);
    const dirs = r.stdout.trim().split("\n");
    if (kind === "busybox") expect(dirs).toEqual([join(busyboxBin, "find"), join(busyboxBin, "sha256sum")]);
    else expect(dirs.every((p) => !p.startsWith(busyboxBin))).toBe(true);
  }, 30_000);

  test("the SSH manifest equals the local one for the same tree", async () => {
    const remote = await runner.files.collectArtifacts(cwd, DECLARATIONS, 64);
    const local = await collectLocalArtifacts(cwd, DECLARATIONS, { maxInlineBytes: 64 });
    expect(remote.every((e) => e.remote === true)).toBe(true);
    expect(withoutRemote(remote)).toEqual(local);
    const by = (path: string, declared: string) =>
      remote.find((e) => e.path === path && e.declared_path === declared);
    expect(remote.filter((e) => e.declared_path === "results/**/*.json").map((e) => e.path)).toEqual([
      "results/a/b/c/r2.json",
      "results/a/r1.json",
      "results/r0.json",
    ]);
    expect(by("results/a/b/c/r2.json", "results/**/*.json")?.content).toEqual({ n: 2 });
    expect(by("bad.json", "*.json")?.parse_error).toStartWith("invalid JSON");
    expect(by("with space.json", "with space.json")?.content).toEqual({ space: true });
    expect(by("outdir/secret.json", "outdir/*.json")).toMatchObject({ exists: false });
    expect(by("../outside/secret.json", "../outside/secret.json")?.reason).toContain("'..'");
    expect(by("notes.txt", "./out/../notes.txt")?.modified_at).toBe("2024-05-06T07:08:09.123Z");
  }, 60_000);

  test("absolute declarations, a whole directory and ** match too", async () => {
    const decls = [
      join(cwd, "results", "**", "*.json"),
      join(base, "outside", "secret.json"),
      "results",
      "**",
    ];
    const remote = await runner.files.collectArtifacts(cwd, decls, 64);
    expect(withoutRemote(remote)).toEqual(await collectLocalArtifacts(cwd, decls, { maxInlineBytes: 64 }));
  }, 60_000);
});
