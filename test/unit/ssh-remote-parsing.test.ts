// Pure parts of the SSH backend: observe report parsing, host-key decisions, auth planning, heredocs.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseObserveReport, toObservation } from "../../src/backends/ssh/ssh-observe.ts";
import type { HostBackendId } from "../../src/core/model/backend-id.ts";
import { checkHostKey } from "../../src/ssh/known-hosts.ts";
import { authFailure, planAuth } from "../../src/ssh/ssh-auth.ts";
import { decideHostKey, fingerprint, hostKeyAlgorithms } from "../../src/ssh/ssh-host-key.ts";
import { heredocDelimiter, launchScript } from "../../src/wrapper/host-scripts.ts";

const job = (backend_id: HostBackendId | null = null) => ({
  ...(typeof backend_id?.wrapper_pid === "number" ? { wrapperPid: backend_id.wrapper_pid } : {}),
  ...(typeof backend_id?.proc_start === "string" ? { procStart: backend_id.proc_start } : {}),
});

describe("observe report", () => {
  const text = [
    "boot=B1",
    "\n@@job /r/jobs/job_A",
    "alive=1 pid=42 start=777",
    "\n@@file started",
    "protocol=1\nwrapper_pid=42\npid=43\npgid=43\nboot_id=B0\nproc_start=777\nstarted_at=100\n",
    "@@file exit",
    "exit_code=0\nsignal=\nreason=exited\nfinished_at=105\ndescendants_alive=0\nstdout_dropped=0\nstderr_dropped=0\n",
    "@@job /r/jobs/job_B",
    "missing=1",
    "",
  ].join("\n");

  test("splits jobs and files; records keep their text", () => {
    const r = parseObserveReport(text);
    expect(r.bootId).toBe("B1");
    expect([...r.jobs.keys()]).toEqual(["/r/jobs/job_A", "/r/jobs/job_B"]);
    const a = r.jobs.get("/r/jobs/job_A")!;
    expect(a).toMatchObject({ alive: true, wrapperPid: 42, procStart: "777", missing: false });
    expect(a.files.started).toContain("pgid=43\n");
    expect(r.jobs.get("/r/jobs/job_B")!.missing).toBe(true);
  });

  test("an observation carries the exit, boot IDs for the reboot rule, and a reused pid reads as dead", () => {
    const r = parseObserveReport(text);
    const o = toObservation(job(), r.jobs.get("/r/jobs/job_A"), r.bootId);
    expect(o.exit).toMatchObject({
      exit_code: 0,
      reason: "exited",
      finished_at: new Date(105_000).toISOString(),
    });
    expect(o.started?.boot_id).toBe("B0");
    expect(o.bootIdNow).toBe("B1");
    expect(o.wrapperAlive).toBe(true);
    const reused = parseObserveReport(text.replace("start=777", "start=999"));
    expect(toObservation(job(), reused.jobs.get("/r/jobs/job_A"), "B1").wrapperAlive).toBe(false);
    const gone = toObservation(job({ wrapper_pid: 5 }), r.jobs.get("/r/jobs/job_B"), "B1");
    expect(gone.wrapperAlive).toBe(false);
  });
});

describe("host keys", () => {
  const blob = (type: string, body: string) => {
    const t = Buffer.from(type);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(t.length);
    return Buffer.concat([len, t, Buffer.from(body)]);
  };
  const key = blob("ssh-ed25519", "k1");
  const dir = mkdtempSync(join(tmpdir(), "awl-hk-"));
  const policy = (lines: string, strict: "yes" | "ask" | "accept-new" = "yes", hashKnownHosts = false) => {
    const file = join(dir, `kh-${Math.random()}`);
    writeFileSync(file, lines);
    return {
      host: "box",
      port: 2222,
      userKnownHostsFiles: [file],
      globalKnownHostsFiles: [],
      strict,
      hashKnownHosts,
    };
  };

  test("match, changed, revoked and unknown", () => {
    const b64 = key.toString("base64");
    expect(decideHostKey(policy(`[box]:2222 ssh-ed25519 ${b64}\n`), key).accept).toBe(true);
    const changed = decideHostKey(
      policy(`[box]:2222 ssh-ed25519 ${blob("ssh-ed25519", "k2").toString("base64")}\n`),
      key,
    );
    expect(changed.accept).toBe(false);
    expect(changed.refusal?.message).toContain("HAS CHANGED");
    const revoked = decideHostKey(
      policy(`@revoked * ssh-ed25519 ${b64}\n[box]:2222 ssh-ed25519 ${b64}\n`),
      key,
    );
    expect(revoked.refusal?.message).toContain("@revoked");
    const unknown = decideHostKey(policy(""), key);
    expect(unknown.refusal?.hint).toContain("ssh-keyscan -t ed25519 -p 2222 box | ssh-keygen -lf -");
    expect(unknown.refusal?.hint).toContain("ssh -p 2222 box true");
    // with the command that reaches the host as its alias does, the hint says that one
    const aliased = decideHostKey({ ...policy(""), connectOnce: "ssh box-alias true" }, key);
    expect(aliased.refusal?.hint).toContain("connect once with ssh box-alias true,");
    expect(unknown.refusal?.hint).not.toContain(">>");
    expect(unknown.refusal?.message).toContain(fingerprint(key));
  });

  test("a key of another type than the known one is a change under every policy, and nothing is added", () => {
    const known = `[box]:2222 ssh-rsa ${blob("ssh-rsa", "r1").toString("base64")}\n`;
    for (const strict of ["yes", "ask", "accept-new"] as const) {
      const p = policy(known, strict);
      const d = decideHostKey(p, key);
      expect(d.accept).toBe(false);
      expect(d.refusal?.message).toContain("REMOTE HOST IDENTIFICATION HAS CHANGED");
      expect(d.refusal?.message).toContain("different ssh-rsa key");
      expect(d.refusal?.hint).not.toContain(">>");
      expect(readFileSync(p.userKnownHostsFiles[0]!, "utf8")).toBe(known);
    }
  });

  test("accept-new with HashKnownHosts writes a hashed entry that matches", () => {
    const p = policy("", "accept-new", true);
    expect(decideHostKey(p, key).accept).toBe(true);
    const text = readFileSync(p.userKnownHostsFiles[0]!, "utf8");
    expect(text).toMatch(/^\|1\|[A-Za-z0-9+/=]+\|[A-Za-z0-9+/=]+ ssh-ed25519 /);
    expect(text).not.toContain("box");
    const q = { host: "box", port: 2222, keyType: "ssh-ed25519", keyBase64: key.toString("base64") };
    expect(checkHostKey(q, p.userKnownHostsFiles).status).toBe("match");
  });

  test("accept-new appends the key to the first user file", () => {
    const p = policy("", "accept-new");
    expect(decideHostKey(p, key).accept).toBe(true);
    expect(readFileSync(p.userKnownHostsFiles[0]!, "utf8")).toContain(
      `[box]:2222 ssh-ed25519 ${key.toString("base64")}`,
    );
  });

  test("known key types are offered first", () => {
    const p = policy(`[box]:2222 ssh-rsa AAAA\n`);
    expect(hostKeyAlgorithms(p).slice(0, 3)).toEqual(["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"]);
  });
});

describe("auth planning", () => {
  test("encrypted keys are skipped and named with ssh-add; missing files are ignored", () => {
    const dir = mkdtempSync(join(tmpdir(), "awl-auth-"));
    for (const n of ["ok", "enc", "bad"]) writeFileSync(join(dir, n), n);
    const plan = planAuth(
      [join(dir, "ok"), join(dir, "enc"), join(dir, "bad"), join(dir, "missing")],
      null,
      (d) =>
        d.toString() === "ok"
          ? { kind: "ok", key: 1 }
          : d.toString() === "enc"
            ? { kind: "encrypted" }
            : { kind: "invalid", message: "junk" },
    );
    expect(plan.keys.map((k) => k.path)).toEqual([join(dir, "ok")]);
    expect(plan.encrypted).toEqual([join(dir, "enc")]);
    expect(plan.unusable[0]).toContain("junk");
    const f = authFailure("u", "box", plan);
    expect(f.message).toContain("encrypted");
    expect(f.hint).toContain(`ssh-add ${join(dir, "enc")}`);
  });
});

describe("launch script", () => {
  test("the heredoc delimiter never occurs as a line of the spec", () => {
    const spec = "a\nAWL_END_x\n";
    const d = heredocDelimiter(spec);
    expect(spec.split("\n")).not.toContain(d);
    const s = launchScript(spec);
    expect(s).toContain(`<<'${d.slice(0, 8)}`);
  });
});
