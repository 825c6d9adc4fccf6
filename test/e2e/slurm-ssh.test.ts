// The Slurm backend as a non-root user over the private sshd (SshRunner on the SSH backend's connection).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SlurmBackend } from "../../src/backends/slurm/slurm-backend.ts";
import { SshRunner } from "../../src/backends/slurm/ssh-runner.ts";
import { SshHost } from "../../src/backends/ssh/ssh-host.ts";
import { JobService } from "../../src/core/job-service.ts";
import { JobStore } from "../../src/core/job-store.ts";
import { gateOnAvailability, type SshdHandle, sshdAvailable, startSshd } from "../helpers/sshd.ts";
import { makeRig, type Rig, run, sacctState, slurmUp } from "./slurm-harness.ts";

const up = (await slurmUp("Slurm over SSH e2e")) && gateOnAvailability("Slurm over SSH e2e", sshdAvailable());

describe.skipIf(!up)("Slurm over SSH as a non-root user", () => {
  let sshd: SshdHandle;
  let rig: Rig;
  let service: JobService;
  let backend: SlurmBackend;
  const slurmIds: string[] = [];

  beforeAll(async () => {
    sshd = await startSshd();
    rig = makeRig(); // only for its temp dir and cleanup
    const knownHosts = join(rig.root, "known_hosts");
    writeFileSync(knownHosts, `${sshd.hostKeyLine}\n`);
    const host = new SshHost({
      name: "cluster",
      target: {
        label: "cluster",
        host: sshd.host,
        port: sshd.port,
        user: sshd.users.dash,
        identityFiles: [sshd.clientKeyPath],
        agentSocket: null,
        hostKey: {
          host: sshd.host,
          port: sshd.port,
          userKnownHostsFiles: [knownHosts],
          globalKnownHostsFiles: [],
          strict: "yes",
        },
        connectTimeoutMs: 10_000,
        keepaliveIntervalMs: 5_000,
        keepaliveCountMax: 3,
      },
      remoteJobDir: "~/.awaitless",
      operationTimeoutMs: 30_000,
      transport: "ssh2",
      configFiles: [],
    });
    const runner = new SshRunner(host);
    backend = new SlurmBackend({
      hosts: { cluster: { slurm_accounting_grace: 30 } },
      pollIntervalMs: 500,
      launchGraceSeconds: 30,
      runnerFor: () => runner,
    });
    service = new JobService(
      JobStore.open(join(rig.root, "ssh-data")),
      { slurm: backend },
      {
        ...rig.service.settings,
        defaultHost: "cluster",
      },
    );
  });
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    backend?.close();
    rig?.close();
    await sshd?.stop();
  });

  const submit = async (argv: string[]) => {
    const r = await service.submit({
      argv,
      backend: "slurm",
      host: "cluster",
      slurm_options: { mem: "32M" },
      allow_duplicate: true,
    });
    const id = (service.getJob(r.job_id).backend_id as { slurm_job_id?: string }).slurm_job_id ?? "";
    slurmIds.push(id);
    return { jobId: r.job_id, slurmJobId: id };
  };

  test("success and exit 7, run as the SSH user in its home directory", async () => {
    const ok = await submit(["sh", "-c", 'echo "I am $(id -un) in $(pwd)"']);
    const seven = await submit(["sh", "-c", "exit 7"]);
    const a = await service.wait(ok.jobId, { timeoutMs: 30_000 });
    expect(a.job_state).toBe("succeeded");
    expect(a.result?.stdout_tail).toContain(`I am ${sshd.users.dash} in /home/${sshd.users.dash}`);
    const b = await service.wait(seven.jobId, { timeoutMs: 30_000 });
    expect(b.job_state).toBe("failed");
    expect(b.result?.exit_code).toBe(7);
  }, 60_000);

  test("cancel while running over SSH", async () => {
    const j = await submit(["sleep", "300"]);
    const deadline = Date.now() + 20_000;
    while ((await service.refresh(j.jobId)).state !== "running") {
      if (Date.now() > deadline) throw new Error("the job never ran");
      await service.backendFor(service.getJob(j.jobId)).waitForChange(service.getJob(j.jobId), 500);
    }
    const c = await service.cancel(j.jobId, 1);
    expect(c.job_state).toBe("cancelled");
    expect((await sacctState(j.slurmJobId)).startsWith("CANCELLED")).toBe(true);
  }, 60_000);
});
