// slurm_job_dir another user could control is refused before anything is submitted (its planted wrapper never
// runs), and a tampered wrapper in our own bin/ is replaced before the next launch, through the compiled binary.
import { afterAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { WRAPPER_FILE } from "../../src/backends/ssh/ssh-host.ts";
import { WRAPPER_SHA256 } from "../../src/wrapper/scripts.ts";
import { sha256Hex } from "../../src/wrapper/sha256.ts";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { slurmUp } from "./slurm-harness.ts";

const NOBODY = 65534;
const asRoot = gateOnAvailability("Slurm trusted-directory tests (root, chown to nobody)", {
  ok: process.getuid?.() === 0,
  why: "needs root (files owned by another uid)",
});
const up = asRoot && (await slurmUp("Slurm trusted-directory e2e"));

function fakeWrapper(marker: string): string {
  return `#!/bin/sh\ntouch '${marker}'\nexit 0\n`;
}

describe.skipIf(!up)("slurm_job_dir", () => {
  const sb = up ? new Sandbox() : null;
  // every job here is waited for to the end (`run`): nothing is left to scancel
  afterAll(() => sb?.cleanup());
  const useRoot = (dir: string) =>
    sb!.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${dir}"\nslurm_accounting_grace = 20\n`,
    );
  const slurm = ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"];

  test("a 0777 directory of another user with a fake wrapper: refused before sbatch, the fake never runs", () => {
    const s = sb!;
    const shared = join(s.root, "shared");
    const marker = join(shared, "fake-wrapper-ran");
    mkdirSync(join(shared, "bin"), { recursive: true });
    mkdirSync(join(shared, "jobs"));
    writeFileSync(join(shared, "bin", WRAPPER_FILE), fakeWrapper(marker), { mode: 0o755 });
    for (const p of [shared, join(shared, "bin"), join(shared, "jobs")]) {
      chownSync(p, NOBODY, NOBODY);
      chmodSync(p, 0o777);
    }
    useRoot(shared);
    const r = s.run(["submit", ...slurm, "--", "true"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`refusing slurm_job_dir ${shared} on localhost`);
    expect(r.stderr).toContain(`${shared} is owned by another user (uid ${NOBODY})`);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(join(shared, "jobs"))).toEqual([]);
  }, 60_000);

  test("a tampered wrapper in our own bin/ is replaced before the next launch and never runs", async () => {
    const s = sb!;
    const root = join(s.root, "cluster");
    useRoot(root);
    const first = await s.runAsync(["run", "--json", ...slurm, "--", "true"]);
    expect(first.json.job_state).toBe("succeeded");
    const wrapper = join(root, "bin", WRAPPER_FILE);
    const marker = join(s.root, "tampered-wrapper-ran");
    writeFileSync(wrapper, fakeWrapper(marker));
    const r = await s.runAsync(["run", "--json", ...slurm, "--", "sh", "-c", "echo real; exit 3"]);
    expect(r.json.exit_code).toBe(3);
    expect(r.json.stdout_tail).toContain("real");
    expect(existsSync(marker)).toBe(false);
    expect(sha256Hex(readFileSync(wrapper))).toBe(WRAPPER_SHA256);
  }, 120_000);
});
