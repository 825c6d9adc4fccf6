// SSH backend end to end through the compiled binary against a private OpenSSH sshd, for a dash and a busybox
// login shell: results and remote artifacts, hostile argv/env, client death and dropped connections (cancel, timeout, lost
// and the rest every backend shares are in test/contract/).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, Sandbox, until } from "../helpers/cli.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { remoteScripts, type SshWorld, sessionPids, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH backend e2e tests (private OpenSSH server)", sshdAvailable());

let w: SshWorld;
if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
  });
  afterAll(async () => {
    await w?.close();
  });
}

const HOSTILE = [
  "it's",
  'a "quoted" $HOME `id` $(id)',
  "new\nline",
  "",
  "tab\there",
  "üñí €",
  "*",
  "-n",
  "\\",
  "'\"'",
];

describe.each(runE2e ? (["dash", "busybox"] as const) : [])("ssh jobs as the %s user", (kind) => {
  const host = () => w.alias[kind];
  const submit = (argv: string[], flags: string[] = []) =>
    w.sb.submit(argv, ["--backend", "ssh", "--host", host(), ...flags]);

  test("submit → wait → result with tails and a hashed, parsed JSON artifact", () => {
    const id = submit(
      [
        "sh",
        "-c",
        'mkdir -p out && printf \'{"ok": true, "n": 3}\' > out/r.json && echo done && echo warn >&2',
      ],
      ["--artifact", "out/*.json"],
    );
    const r = w.sb.run(["wait", "--json", id]);
    expect(r.code).toBe(0);
    const res = r.json;
    expect(res.state).toBe("succeeded");
    expect(res.backend).toBe("ssh");
    expect(res.host).toBe(host());
    expect(res.stdout_tail).toBe("done\n");
    expect(res.stderr_tail).toBe("warn\n");
    expect(res.artifacts).toHaveLength(1);
    const a = res.artifacts[0];
    expect(a.exists).toBe(true);
    expect(a.remote).toBe(true);
    expect(a.size_bytes).toBe(20);
    expect(a.sha256).toBe(new Bun.CryptoHasher("sha256").update('{"ok": true, "n": 3}').digest("hex"));
    expect(a.content).toEqual({ ok: true, n: 3 });
    expect(res.parsed_results).toEqual({ ok: true, n: 3 });
    const st = w.sb.status(id);
    expect(st.backend_id.remote_dir).toContain(`/.awaitless/jobs/${id}`);
  }, 30_000);

  test("a ** glob artifact lists nested files by path relative to the cwd, sorted, without dot files", () => {
    const dir = `res-${Math.random().toString(36).slice(2, 10)}`;
    const id = submit(
      [
        "sh",
        "-c",
        `mkdir -p ${dir}/a/b ${dir}/.cache && echo '{"n": 2}' > ${dir}/a/b/deep.json && echo '[1]' > ${dir}/top.json && echo '{}' > ${dir}/.cache/skip.json`,
      ],
      ["--artifact", `${dir}/**/*.json`],
    );
    const r = w.sb.run(["wait", "--json", id]);
    expect(r.code).toBe(0);
    const arts = r.json.artifacts;
    expect(arts.map((a: { path: string }) => a.path)).toEqual([`${dir}/a/b/deep.json`, `${dir}/top.json`]);
    expect(arts.every((a: { remote: boolean; exists: boolean }) => a.remote && a.exists)).toBe(true);
    // one shape whatever the count: object artifacts' keys merged; the array stays in its entry's content
    expect(r.json.parsed_results).toEqual({ n: 2 });
    expect(arts[1].content).toEqual([1]);
    // The job ran in the test user's home on this machine: <home>/.awaitless/jobs/<id>.
    const home = (w.sb.status(id).backend_id.remote_dir as string).replace(/\/\.awaitless\/jobs\/[^/]+$/, "");
    rmSync(join(home, dir), { recursive: true, force: true });
  }, 30_000);

  test("argv and env with hostile characters round-trip exactly", () => {
    const id = submit(
      [
        "sh",
        "-c",
        'for a in "$@"; do printf "[%s]\\n" "$a"; done; printf "<%s>\\n" "$AWL_HOSTILE"',
        "sh",
        ...HOSTILE,
      ],
      ["--env", `AWL_HOSTILE=${HOSTILE.join("|")}`],
    );
    const r = w.sb.run(["wait", "--json", id]);
    expect(r.json.state).toBe("succeeded");
    const expected = `${HOSTILE.map((a) => `[${a}]\n`).join("")}<${HOSTILE.join("|")}>\n`;
    expect(r.json.stdout_tail).toBe(expected);
  }, 30_000);

  test("a client killed mid-wait loses nothing: a new client collects the result", async () => {
    const id = submit(["sh", "-c", "sleep 2; echo survived"]);
    const waiter = w.sb.spawn(["wait", "--json", id]);
    // Kill it once it has a command or its watch channel open on the host (its death is what matters).
    await until("the waiter's remote channel", () => remoteScripts(w.sshd).length > 0);
    waiter.kill("SIGKILL");
    await waiter.exited;
    const r = await w.sb.runAsync(["wait", "--json", id]);
    expect(r.json.state).toBe("succeeded");
    expect(r.json.stdout_tail).toBe("survived\n");
  }, 30_000);

  test("dropping the SSH connection mid-wait (sshd child killed): the wait reconnects and completes", async () => {
    const user = w.sshd.users[kind];
    const id = submit(["sh", "-c", "sleep 3; echo after-drop"]);
    const before = new Set(sessionPids(w.sshd, user));
    const waiter = w.sb.spawn(["wait", "--json", id]);
    const serving = await until("the waiter's sshd session", () => {
      const fresh = sessionPids(w.sshd, user).filter((p) => !before.has(p));
      return fresh.length > 0 ? fresh : null;
    });
    for (const p of serving) killQuietly(p);
    const [stdout, stderr, code] = await Promise.all([
      new Response(waiter.stdout).text(),
      new Response(waiter.stderr).text(),
      waiter.exited,
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const res = JSON.parse(stdout);
    expect(res.state).toBe("succeeded");
    expect(res.stdout_tail).toBe("after-drop\n");
  }, 30_000);
});

describe.skipIf(!runE2e)("gc of SSH jobs", () => {
  test("a finished job whose host is unreachable is kept for the next gc, or forgotten on request", () => {
    // A sandbox of its own (gc removes every finished job of its store), with a copy of the ssh config to break.
    const sb = new Sandbox();
    const sshDir = join(sb.root, ".ssh");
    try {
      mkdirSync(sshDir, { mode: 0o700 });
      const config = readFileSync(join(w.sshDir, "config"), "utf8");
      writeFileSync(join(sshDir, "config"), config);
      copyFileSync(join(w.sshDir, "known_hosts"), join(sshDir, "known_hosts"));
      const host = w.alias.dash;
      const remoteDir = (id: string) =>
        sb.run(["inspect", "--json", id]).json.job.backend_id.remote_dir as string;
      const finished = () => {
        const id = sb.submit(["true"], ["--backend", "ssh", "--host", host]);
        expect(sb.run(["wait", id]).code).toBe(0);
        return id;
      };
      const closedPort = (() => {
        const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
        const port = s.port;
        s.stop(true);
        return port;
      })();
      const unreachable = () =>
        writeFileSync(join(sshDir, "config"), config.replaceAll(`Port ${w.sshd.port}`, `Port ${closedPort}`));
      const reachable = () => writeFileSync(join(sshDir, "config"), config);

      const a = finished();
      const dirA = remoteDir(a);
      expect(existsSync(join(dirA, "exit"))).toBe(true);
      unreachable();
      const kept = sb.run(["gc", "--json", "--keep", "0"]);
      expect(kept.code).toBe(0);
      expect(kept.json.removed).toEqual([]);
      expect(kept.json.kept.map((k: { job_id: string }) => k.job_id)).toEqual([a]);
      expect(sb.jobCount()).toBe(1);
      expect(existsSync(dirA)).toBe(true);
      expect(sb.run(["gc", "--keep", "0"]).stdout).toContain(`kept ${a}: `);

      reachable();
      expect(sb.run(["gc", "--json", "--keep", "0"]).json.removed).toEqual([a]);
      expect(existsSync(dirA)).toBe(false);
      expect(sb.jobCount()).toBe(0);

      const b = finished();
      const dirB = remoteDir(b);
      unreachable();
      const forgot = sb.run(["gc", "--json", "--keep", "0", "--forget-unreachable"]);
      expect(forgot.json.removed).toEqual([b]);
      expect(forgot.json.forgotten).toMatchObject([{ job_id: b, host }]);
      expect(sb.jobCount()).toBe(0);
      expect(existsSync(dirB)).toBe(true); // the host's copy stays, as gc said
      rmSync(dirB, { recursive: true, force: true });
    } finally {
      sb.cleanup();
    }
  });
});
