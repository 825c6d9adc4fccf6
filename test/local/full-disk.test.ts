// A full disk loses nothing, through the compiled binary on a real 3 MiB tmpfs holding the data dir: a job whose
// output fills it keeps its exit code, every read keeps working, a launch fails with no_space and creates
// nothing, gc makes room again; and when the store cannot be written at all, reads report from the job's records.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import {
  fillUp,
  freeBytes,
  mountTmpfs,
  remountTmpfs,
  tmpfsAvailable,
  unmountTmpfs,
} from "../helpers/tmpfs.ts";

const FILL = ["sh", "-c", 'head -c 8000000 /dev/zero | tr "\\0" x; echo done; exit 7'];

function storedState(dataDir: string, jobId: string): string | undefined {
  const db = new Database(join(dataDir, "store.db"), { readonly: true });
  try {
    return (db.query("SELECT state FROM jobs WHERE job_id = ?").get(jobId) as { state: string } | null)
      ?.state;
  } finally {
    db.close();
  }
}

function jobDirs(dataDir: string): string[] {
  return existsSync(join(dataDir, "jobs")) ? readdirSync(join(dataDir, "jobs")) : [];
}

if (gateOnAvailability("full-disk tests (a real tmpfs as the data dir)", tmpfsAvailable())) {
  const boxes: Sandbox[] = [];
  afterAll(() => {
    for (const sb of boxes) {
      unmountTmpfs(sb.dataDir);
      sb.cleanup();
    }
  });
  function fullDiskBox(): Sandbox {
    const sb = new Sandbox();
    boxes.push(sb);
    mountTmpfs(sb.dataDir, "3m", ["mode=0700"]);
    return sb;
  }

  describe("a data dir on a full 3 MiB tmpfs", () => {
    test("the job that filled it keeps its exit code; reads work; a launch fails cleanly; gc makes room", () => {
      const sb = fullDiskBox();
      const run = sb.run(["run", "--json", "--", ...FILL]);
      expect(run.stderr).not.toContain("report this");
      expect(run.code).toBe(3);
      expect(run.json.result.exit_code).toBe(7);
      expect(run.json.job_state).toBe("failed");
      expect(run.json.result.digest[0]).toContain("was full while it ran");
      expect(run.json.result.error.detail).toContain("was full while it ran");
      const id = run.json.job_id as string;
      // The store's reserve took the result: sealed at once. A second job and a filler take what the reserve left.
      expect(storedState(sb.dataDir, id)).toBe("failed");
      expect(run.stderr).toContain(
        `the disk holding the job database ${join(sb.dataDir, "store.db")} is full`,
      );
      const second = sb.run(["run", "--json", "--", ...FILL]);
      expect(second.code).toBe(3);
      expect(second.json.result.exit_code).toBe(7);
      const id2 = second.json.job_id as string;
      fillUp(sb.dataDir); // whatever room the second job's records left
      expect(freeBytes(sb.dataDir)).toBeLessThan(4096);

      const list = sb.run(["list", "--json"]);
      expect(list.code).toBe(0);
      expect(list.json.jobs).toHaveLength(2);
      expect(list.json.jobs[0]).toMatchObject({ job_id: id2, state: "failed", exit_code: 7 });
      expect(list.json.jobs[1]).toMatchObject({ job_id: id, state: "failed", exit_code: 7 });
      const status = sb.run(["status", "--json", id]);
      expect(status.code).toBe(0);
      expect(status.json).toMatchObject({ state: "failed", exit_code: 7 });
      const wait = sb.run(["wait", "--json", id]);
      expect(wait.code).toBe(3);
      expect(wait.json.result.exit_code).toBe(7);
      const logs = sb.run(["logs", id, "--tail", "1"]);
      expect(logs.code).toBe(0);
      expect(logs.stdout).toMatch(/^x+…?$/m);
      const inspect = sb.run(["inspect", "--json", id]);
      expect(inspect.code).toBe(0);
      expect(inspect.json.result.exit_code).toBe(7);

      for (const verb of ["run", "submit"]) {
        const refused = sb.run([verb, "--", "echo", "hi"]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain(`no space left in ${sb.dataDir}`);
        expect(refused.stderr).toMatch(/free of 3\.0 MiB/);
        expect(refused.stderr).toContain("awaitless gc");
        expect(refused.stderr).toContain("log_cap_bytes");
        expect(refused.stderr).toContain("--log-dir");
        expect(refused.stderr).not.toContain("report this");
        // nothing half-made: no new row, no new job directory
        const ids = sb.run(["list", "--json"]).json.jobs.map((j: { job_id: string }) => j.job_id);
        expect(ids).toEqual([id2, id]);
        expect(jobDirs(sb.dataDir).sort()).toEqual([id, id2].sort());
      }
      const json = sb.run(["submit", "--json", "--", "echo", "hi"]);
      expect(json.json.error.code).toBe("no_space");

      // gc removes what is sealed; the room it makes lets the other result be stored and removed too.
      for (let pass = 0; pass < 2 && jobDirs(sb.dataDir).length > 0; pass++) {
        expect(sb.run(["gc", "--keep", "0"]).code).toBe(0);
      }
      expect(jobDirs(sb.dataDir)).toEqual([]);
      const again = sb.run(["run", "--json", "--", "echo", "room again"]);
      expect(again.code).toBe(0);
      expect(again.json.result.stdout_tail).toBe("room again\n");
    });

    test("a launch whose files cannot be written (no inodes left) leaves no row and no directory", () => {
      const sb = fullDiskBox();
      expect(sb.run(["run", "--", "true"]).code).toBe(0);
      const first = jobDirs(sb.dataDir);
      // Room for the job directory itself and nothing more: spec.sh cannot be created (ENOSPC) although
      // megabytes are free, so the launch gets past the free-space check and fails while writing.
      const s = statfsSync(sb.dataDir);
      remountTmpfs(sb.dataDir, [`nr_inodes=${s.files - s.ffree + 1}`]);
      const refused = sb.run(["submit", "--client-request-id", "retry-me", "--", "echo", "hi"]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`no space left in ${join(sb.dataDir, "jobs")}`);
      expect(refused.stderr).toContain("no free inodes");
      expect(refused.stderr).toContain("ENOSPC");
      expect(refused.stderr).not.toContain("report this");
      expect(jobDirs(sb.dataDir)).toEqual(first);
      expect(sb.run(["list", "--json"]).json.jobs).toHaveLength(1);
      // Nothing was made: the same client_request_id launches the job once there is room.
      remountTmpfs(sb.dataDir, ["nr_inodes=10000"]);
      const again = sb.run(["submit", "--json", "--client-request-id", "retry-me", "--", "echo", "hi"]);
      expect(again.code).toBe(0);
      expect(again.json.idempotent_replay).toBe(false);
      expect(sb.run(["wait", "--json", again.json.job_id]).json.result.stdout_tail).toBe("hi\n");
    });

    test("when the store cannot be written, reads report the result from the exit record and seal it later", async () => {
      const sb = fullDiskBox();
      const go = join(sb.work, "go");
      const id = sb.submit(["sh", "-c", `echo before; while [ ! -e '${go}' ]; do sleep 0.05; done; exit 5`]);
      await until("the job to run", () => sb.status(id).state === "running");
      // The store's own reserve is spent and the disk is full: nothing can be written to the database.
      rmSync(join(sb.dataDir, "store.reserve"), { force: true });
      fillUp(sb.dataDir);
      expect(freeBytes(sb.dataDir)).toBeLessThan(4096);
      writeFileSync(go, "");
      const jobDir = join(sb.dataDir, "jobs", id);
      await until("the exit record", () => existsSync(join(jobDir, "exit")));

      const status = sb.run(["status", "--json", id]);
      expect(status.code).toBe(0);
      expect(status.json).toMatchObject({ state: "failed", exit_code: 5 });
      expect(status.stderr).toContain("could not be updated");
      expect(status.stderr).toContain(join(sb.dataDir, "store.db"));
      const wait = sb.run(["wait", "--json", id]);
      expect(wait.code).toBe(3);
      expect(wait.json.result).toMatchObject({ exit_code: 5, stdout_tail: "before\n" });
      const list = sb.run(["list", "--json"]);
      expect(list.code).toBe(0);
      expect(list.json.jobs[0]).toMatchObject({ job_id: id, state: "failed", exit_code: 5 });
      expect(storedState(sb.dataDir, id)).toBe("running");

      rmSync(join(sb.dataDir, "filler"));
      const sealed = sb.run(["status", "--json", id]);
      expect(sealed.code).toBe(0);
      expect(sealed.stderr).not.toContain("could not be updated");
      expect(storedState(sb.dataDir, id)).toBe("failed");
      expect(sb.run(["wait", "--json", id]).json.result.exit_code).toBe(5);
    });
  });
}
