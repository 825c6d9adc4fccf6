// Finished jobs written straight into a sandbox's store (no processes, no wrapper): for tests that need many jobs.
import path from "node:path";
import { newJobId } from "../../src/core/model/ids.ts";
import { JobStore } from "../../src/core/store/job-store.ts";
import { plainSpec } from "../helpers/spec.ts";

/** `count` succeeded jobs in the store of `dataDir`, the i-th running `argvOf(i)`; their IDs, oldest first. */
export function seedFinishedJobs(
  dataDir: string,
  root: string,
  count: number,
  argvOf: (i: number) => string[],
): string[] {
  const ids: string[] = [];
  const store = JobStore.open(dataDir);
  try {
    for (let i = 0; i < count; i++) {
      const id = newJobId();
      const now = new Date().toISOString();
      store.reserve(
        {
          job_id: id,
          state: "starting",
          spec: plainSpec({ argv: argvOf(i) }),
          fingerprint: `fp-${i}`,
          client_request_id: null,
          active_key: `key-${id}`,
          created_at: now,
          job_dir: path.join(root, "jobs", id),
        },
        true,
      );
      store.transition(id, "succeeded", {
        terminal: {
          exit_code: 0,
          signal: null,
          reason: null,
          finished_at: now,
          stdout_bytes: 0,
          stderr_bytes: 0,
          result_json: "{}",
          result_sha256: "x",
        },
      });
      ids.push(id);
    }
  } finally {
    store.close();
  }
  return ids;
}
