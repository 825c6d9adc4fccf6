// The one guard before a job's files are removed or written (core/util/job-dir-guard.ts), and its host side: the same
// rule in remove.sh under sh, dash and busybox. Each case has a victim outside the job's directory that must stay.
import { afterAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  checkJobDir,
  JobDirRefused,
  jobDirScope,
  removeHostJobDir,
  removeJobDir,
} from "../../src/core/util/job-dir-guard.ts";
import { keyValues, REMOVE, script } from "../../src/wrapper/host-scripts.ts";

const tmp = realpathSync(mkdtempSync(join(tmpdir(), "awl-guard-")));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ID = "job_01JD0000000000000000000000";
const ID08 = "job_019A00000001AEF009D0C2";
let n = 0;

/** A data directory with jobs/ and imported-0.8/, and a victim directory beside it. */
function world() {
  const root = join(tmp, String(n++));
  const data = join(root, "data");
  mkdirSync(join(data, "jobs"), { recursive: true });
  mkdirSync(join(data, "imported-0.8"));
  const victim = join(root, "victim");
  mkdirSync(join(victim, ID), { recursive: true });
  writeFileSync(join(victim, ID, "keep"), "keep");
  writeFileSync(join(victim, "keep"), "keep");
  return { root, data, victim };
}

const refused = (f: () => unknown) => expect(f).toThrow(JobDirRefused);

describe("checkJobDir / removeJobDir", () => {
  test("the job's own directory (jobs/, imported-0.8/, an attempt, its --log-dir) is removed", () => {
    const w = world();
    const own = join(w.data, "jobs", ID);
    mkdirSync(join(own, "attempts", "2"), { recursive: true });
    removeJobDir(join(own, "attempts", "2"), jobDirScope({ job_id: ID }, w.data));
    expect(existsSync(join(own, "attempts", "2"))).toBe(false);
    removeJobDir(own, jobDirScope({ job_id: ID }, w.data));
    expect(existsSync(own)).toBe(false);
    const imported = join(w.data, "imported-0.8", ID08);
    mkdirSync(imported);
    removeJobDir(imported, jobDirScope({ job_id: ID08 }, w.data));
    expect(existsSync(imported)).toBe(false);
    const logs = join(w.root, "logs");
    mkdirSync(join(logs, ID), { recursive: true });
    symlinkSync(logs, join(w.root, "logs-link")); // the user's own link to their --log-dir is theirs to use
    removeJobDir(
      join(w.root, "logs-link", ID),
      jobDirScope({ job_id: ID, spec: { log_dir: join(w.root, "logs-link") } }, w.data),
    );
    expect(existsSync(join(logs, ID))).toBe(false);
    // nothing there: nothing to do
    expect(checkJobDir(join(w.data, "jobs", ID), jobDirScope({ job_id: ID }, w.data))).toBe(false);
  });

  test("a path-shaped ID, `..`, another job's name, a foreign parent: refused, the victim stays", () => {
    const w = world();
    const scope = (id: string) => jobDirScope({ job_id: id }, w.data);
    refused(() => removeJobDir(join(w.data, "imported-0.8", "../../victim"), scope("../../victim")));
    refused(() => removeJobDir(`${w.data}/imported-0.8/../../victim/${ID}`, scope(ID)));
    refused(() => removeJobDir(join(w.victim, ID), scope(ID)));
    refused(() => removeJobDir(join(w.data, "jobs", ID08), scope(ID)));
    refused(() => removeJobDir(`${join(w.data, "jobs", ID)}/`, scope(ID)));
    refused(() => removeJobDir(w.victim, scope(ID)));
    refused(() => removeJobDir(join(w.data, "jobs", ID, "attempts", "x"), scope(ID)));
    expect(existsSync(join(w.victim, ID, "keep"))).toBe(true);
  });

  test("links: jobs/ a link, the job directory a link, attempts/ a link: refused, the victim stays", () => {
    const a = world();
    rmSync(join(a.data, "jobs"), { recursive: true });
    symlinkSync(a.victim, join(a.data, "jobs"));
    refused(() => removeJobDir(join(a.data, "jobs", ID), jobDirScope({ job_id: ID }, a.data)));
    const b = world();
    symlinkSync(join(b.victim, ID), join(b.data, "jobs", ID));
    refused(() => removeJobDir(join(b.data, "jobs", ID), jobDirScope({ job_id: ID }, b.data)));
    const c = world();
    mkdirSync(join(c.data, "jobs", ID));
    symlinkSync(c.victim, join(c.data, "jobs", ID, "attempts"));
    refused(() =>
      removeJobDir(join(c.data, "jobs", ID, "attempts", "2"), jobDirScope({ job_id: ID }, c.data)),
    );
    for (const w of [a, b, c]) expect(existsSync(join(w.victim, ID, "keep"))).toBe(true);
  });

  test("the host side (a Slurm login node's files here): a jobs/ reached through a link is refused", () => {
    const w = world();
    const root = join(w.root, "slurm");
    mkdirSync(join(root, "real"), { recursive: true });
    symlinkSync(w.victim, join(root, "jobs"));
    refused(() => removeHostJobDir(join(root, "jobs", ID), ID));
    refused(() => removeHostJobDir(join(w.victim, ID), ID)); // not in a jobs directory
    expect(existsSync(join(w.victim, ID, "keep"))).toBe(true);
    mkdirSync(join(root, "real", "jobs", ID), { recursive: true });
    removeHostJobDir(join(root, "real", "jobs", ID), ID);
    expect(existsSync(join(root, "real", "jobs", ID))).toBe(false);
  });
});

const shells = [
  ["sh", Bun.which("sh")],
  ["dash", Bun.which("dash")],
  ["busybox", Bun.which("busybox")],
].filter((s): s is [string, string] => s[1] !== null);

describe.each(shells)("remove.sh under %s", (_name, shell) => {
  const run = (args: string[]) => {
    const argv = shell.endsWith("busybox") ? [shell, "sh", "-s"] : [shell, "-s"];
    const p = Bun.spawnSync(argv, {
      stdin: Buffer.from(script(REMOVE, args)),
      stdout: "pipe",
      stderr: "pipe",
    });
    return { code: p.exitCode, refused: keyValues(p.stdout.toString()).refused };
  };

  test("removes <root>/jobs/<ID> and an attempt; refuses links, other names, `..` and foreign parents", () => {
    const w = world();
    const root = join(w.root, "remote");
    const jobs = join(root, "jobs");
    mkdirSync(join(jobs, ID, "attempts", "3"), { recursive: true });
    expect(run([join(jobs, ID, "attempts", "3"), ID])).toEqual({ code: 0, refused: undefined });
    expect(existsSync(join(jobs, ID, "attempts", "3"))).toBe(false);
    expect(run([join(jobs, ID), ID])).toEqual({ code: 0, refused: undefined });
    expect(existsSync(join(jobs, ID))).toBe(false);
    expect(run([join(jobs, ID), ID]).code).toBe(0); // gone already: nothing to do

    const refusals: [string, string][] = [
      [join(w.victim, ID), ID],
      [`${jobs}/../../victim/${ID}`, ID],
      [join(jobs, ID), "../victim"],
      [join(jobs, ID08), ID],
      [w.victim, "victim"],
    ];
    symlinkSync(join(w.victim, ID), join(jobs, ID));
    refusals.push([join(jobs, ID), ID]);
    const linked = join(w.root, "linked");
    mkdirSync(linked);
    symlinkSync(w.victim, join(linked, "jobs"));
    refusals.push([join(linked, "jobs", ID), ID]);
    for (const [dir, id] of refusals) {
      const r = run([dir, id]);
      expect(r.code).toBe(2);
      expect(r.refused).toBeDefined();
    }
    expect(existsSync(join(w.victim, ID, "keep"))).toBe(true);
    expect(existsSync(join(w.victim, "keep"))).toBe(true);
  });
});
