// Awaitless 0.8 configs, verbatim (test/fixtures/awaitless-08-configs), read as the settings they meant in 0.8.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isLocalLoginNode, slurmHostSettings } from "../../src/backends/slurm/slurm-host.ts";
import { mergeSlurmOptions, slurmOptionArgs } from "../../src/backends/slurm/slurm-options.ts";
import { resolveHostSettings } from "../../src/backends/ssh/ssh-target.ts";
import { DEFAULTS, loadConfig } from "../../src/config/config.ts";
import { profileKeysFor } from "../../src/config/config-legacy.ts";
import { AwaitlessError } from "../../src/core/model/errors.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "awaitless-08-configs");
const dir = mkdtempSync(join(tmpdir(), "awl-config08-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { HOME: dir, AWAITLESS_DATA_DIR: join(dir, "data") };
const load = (name: string) => loadConfig({ ...env, AWAITLESS_CONFIG: join(FIXTURES, name) });
const sshCtx = { home: dir, user: "me", env: {}, configFile: join(dir, "no-ssh-config") };

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

function errorOf(f: () => unknown): AwaitlessError {
  try {
    f();
  } catch (e) {
    if (e instanceof AwaitlessError) return e;
    throw e;
  }
  throw new Error("expected an error");
}

describe("the 0.8 README's SSH example", () => {
  const c = load("ssh.toml");
  test("[defaults]: 0.8's poll_interval (seconds) is our poll_interval_seconds, and the Tasks poll interval", () => {
    expect(c.defaults).toEqual({
      ...DEFAULTS,
      backend: "local",
      log_tail_lines: 200,
      max_return_bytes: 65536,
      poll_interval_seconds: 2,
      task_poll_interval_seconds: 2,
    });
  });
  test("[hosts.gpu] is read unchanged and resolves to the same target", () => {
    expect(c.hosts.gpu).toEqual({
      hostname: "gpu.example.com",
      port: 22,
      user: "developer",
      identity_file: "~/.ssh/id_ed25519",
      remote_job_dir: "~/.awaitless/jobs",
    });
    const s = resolveHostSettings("gpu", c.hosts, sshCtx);
    if (s.transport !== "ssh2") throw new Error("expected the built-in client");
    expect(s.target).toMatchObject({ host: "gpu.example.com", port: 22, user: "developer" });
    expect(s.target.identityFiles[0]).toBe(join(dir, ".ssh/id_ed25519"));
    expect(s.remoteJobDir).toBe("~/.awaitless/jobs");
    // the host-key hints' command reaches the same host as the same user with OpenSSH
    expect(s.target.hostKey.connectOnce).toBe(
      `ssh -p 22 -l developer -i ${join(dir, ".ssh/id_ed25519")} gpu.example.com true`,
    );
  });
  test("an ~/.ssh/config alias with no [hosts] table: the host-key hint says `ssh ALIAS true`", () => {
    const s = resolveHostSettings("box", {}, sshCtx);
    if (s.transport !== "ssh2") throw new Error("expected the built-in client");
    expect(s.target.hostKey.connectOnce).toBe("ssh box true");
  });
  test("one note names the renamed key", () => {
    expect(c.legacyNotes).toEqual([
      "[defaults] poll_interval = 2 is read as poll_interval_seconds = 2 and, as in 0.8, task_poll_interval_seconds = 2",
    ]);
  });
});

describe("the 0.8 README's Slurm example", () => {
  const c = load("slurm.toml");
  test("[defaults] and [hosts.cluster] mean what they meant in 0.8", () => {
    expect(c.defaults).toMatchObject({ backend: "slurm", host: "cluster", poll_interval_seconds: 10 });
    expect(c.defaults.task_poll_interval_seconds).toBe(10);
    expect(c.hosts.cluster).toMatchObject({
      hostname: "login.cluster.example",
      user: "developer",
      backend: "slurm",
      gssapi_authentication: false,
    });
    expect(isLocalLoginNode("cluster", c.hosts)).toBe(false);
    const s = slurmHostSettings("cluster", c.hosts);
    expect(s.callTimeoutMs).toBe(30_000);
    expect(s.accountingGraceMs).toBe(120_000);
    expect(s.jobDir).toBe(".awaitless/slurm/jobs");
  });
  test("gssapi_authentication = false keeps the built-in client (which never uses GSSAPI)", () => {
    expect(resolveHostSettings("cluster", c.hosts, sshCtx).transport).toBe("ssh2");
  });
  test("[hosts.cluster.slurm] becomes the same sbatch flags", () => {
    expect(slurmOptionArgs(mergeSlurmOptions(c.hosts.cluster!.slurm ?? {}, {}))).toEqual([
      "--account=research",
      "--cpus-per-task=1",
      "--nodes=1",
      "--ntasks=1",
      "--partition=compute",
      "--time=00:30:00",
    ]);
  });
});

describe("0.8's examples/config.toml", () => {
  const c = load("examples-config.toml");
  test("every [defaults] key of 0.8 lands on ours; remote_queue_dir is explained and dropped", () => {
    expect(c.defaults).toMatchObject({
      inline_timeout_seconds: 30,
      poll_interval_seconds: 2,
      task_ttl_seconds: 604800,
      task_poll_interval_seconds: 2,
    });
    expect(c.hosts.example).not.toHaveProperty("remote_queue_dir");
    expect(c.legacyNotes.some((n) => n.includes("remote_queue_dir") && n.includes("no effect"))).toBe(true);
    expect(c.legacyNotes).toHaveLength(5);
  });
});

describe("0.8 keys beyond the examples", () => {
  test("gssapi_authentication = true selects the system ssh client with GSSAPI on, and says so", () => {
    const p = write("gss.toml", '[hosts.kdc]\nhostname = "login.example"\ngssapi_authentication = true\n');
    const c = loadConfig({ ...env, AWAITLESS_CONFIG: p });
    const s = resolveHostSettings("kdc", c.hosts, sshCtx);
    if (s.transport !== "openssh") throw new Error("expected the openssh transport");
    expect(s.openssh.args.join(" ")).toContain("-o GSSAPIAuthentication=yes");
    expect(c.legacyNotes[0]).toContain('transport = "openssh"');
  });
  test("data_dir is read (AWAITLESS_DATA_DIR wins over it); a relative one is refused", () => {
    const p = write("data.toml", '[defaults]\ndata_dir = "~/awl-data"\n');
    expect(loadConfig({ HOME: dir, AWAITLESS_CONFIG: p }).dataDir).toBe(join(dir, "awl-data"));
    expect(loadConfig({ ...env, AWAITLESS_CONFIG: p }).dataDir).toBe(env.AWAITLESS_DATA_DIR);
    const bad = write("data-rel.toml", '[defaults]\ndata_dir = "data"\n');
    expect(errorOf(() => loadConfig({ HOME: dir, AWAITLESS_CONFIG: bad })).message).toContain(
      "an absolute path or one starting with ~/",
    );
  });
  test("0.8's execution profile (user_group, sources, env) is kept aside, not applied", () => {
    const p = write(
      "profile.toml",
      '[hosts.npu]\nuser_group = "HwHiAiUser"\nsources = ["scripts/env.sh"]\n[hosts.npu.env]\nA = "1"\n',
    );
    const c = loadConfig({ ...env, AWAITLESS_CONFIG: p });
    expect(c.legacyProfiles).toEqual({ npu: ["user_group", "sources", "env"] });
    expect(c.hosts.npu).toEqual({});
    // 0.8 applied all three to SSH jobs, only env to Slurm jobs
    expect(profileKeysFor(c.legacyProfiles.npu!, "ssh")).toEqual(["user_group", "sources", "env"]);
    expect(profileKeysFor(c.legacyProfiles.npu!, "slurm")).toEqual(["env"]);
    expect(profileKeysFor(["user_group", "sources"], "slurm")).toEqual([]);
  });
  test("an old name and its new name with different values is refused", () => {
    const p = write("both.toml", "[defaults]\nmcp_task_ttl_seconds = 60\ntask_ttl_seconds = 120\n");
    const e = errorOf(() => loadConfig({ ...env, AWAITLESS_CONFIG: p }));
    expect(e.message).toContain("sets both mcp_task_ttl_seconds = 60");
    expect(e.hint).toContain("remove mcp_task_ttl_seconds");
  });
  test("a typo of an old name is pointed at our name", () => {
    const p = write("typo.toml", "[defaults]\nadaptive_inline_timeout_second = 5\n");
    expect(errorOf(() => loadConfig({ ...env, AWAITLESS_CONFIG: p })).message).toContain(
      "(did you mean `inline_timeout_seconds`?)",
    );
  });
});
