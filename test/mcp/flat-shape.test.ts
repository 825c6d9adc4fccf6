// wait_for_job's structuredContent through `awaitless mcp`: flat as 0.8's, compact, waited_seconds, the same result
// everywhere; the CLI's --json keeps every field (false, 0 and leftovers of count 0 too) and snapshot.sha256 covers them all.
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { ENVELOPE_FIELDS } from "../../src/core/model/service-api.ts";
import { canonicalJson } from "../../src/core/results/canonical-json.ts";
import { structured } from "./harness.ts";
import { BINARY, connectStdio, makeSandbox } from "./stdio-client.ts";

type Json = Record<string, unknown>;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The envelope fields docs/protocol.md ("Waiting and delivery") names: beside the result, outside its hash. */
const ENVELOPE: readonly string[] = ENVELOPE_FIELDS;
const resultPart = (answer: Json): Json =>
  Object.fromEntries(Object.entries(answer).filter(([k]) => !ENVELOPE.includes(k)));
const sha256Of = ({ snapshot: _s, ...body }: Json): string =>
  createHash("sha256").update(canonicalJson(body)).digest("hex");
/**
 * docs/protocol.md, "Waiting and delivery", written out here on its own: null, empty, false and 0 left out
 * (exit_code kept unless null), the same inside leftovers and resources, leftovers whole when its count is 0,
 * job_state when it repeats state, descendants_alive beside leftovers.
 */
const silent = (v: unknown) =>
  v === null ||
  v === "" ||
  v === false ||
  v === 0 ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === "object" && Object.keys(v ?? {}).length === 0);
const dropSilent = (o: Json): Json =>
  Object.fromEntries(Object.entries(o).filter(([k, v]) => (k === "exit_code" ? v !== null : !silent(v))));
const compacted = (answer: Json): Json => {
  const out = dropSilent(answer);
  for (const k of ["leftovers", "resources"]) if (out[k] !== undefined) out[k] = dropSilent(out[k] as Json);
  if ((answer.leftovers as Json | undefined)?.count === 0) delete out.leftovers;
  if (answer.leftovers !== undefined) delete out.descendants_alive;
  if (out.job_state === answer.state) delete out.job_state;
  return Object.fromEntries(Object.entries(out).filter(([k, v]) => k === "exit_code" || !silent(v)));
};

for (const era of ["legacy", "modern"] as const) {
  describe(`wait_for_job is flat (${era})`, () => {
    test("pending answers grow waited_seconds; the final one reads as 0.8's (.exit_code, .parsed_results.x)", async () => {
      const box = makeSandbox();
      cleanups.push(box.remove);
      const gate = path.join(box.root, "gate");
      cleanups.push(() => writeFileSync(gate, ""));
      const conn = await connectStdio(era, box.env, box.root);
      cleanups.push(conn.close);
      const { client } = conn;
      const script =
        'echo started; while [ ! -e "$0" ]; do sleep 0.05; done; ' +
        'mkdir -p results; printf \'{"correctness": true, "latency_us": 24.7}\' > results/benchmark.json; echo done';
      const sub = structured<Json>(
        await client.callTool({
          name: "submit_job",
          arguments: { command: ["sh", "-c", script, gate], artifacts: ["results/benchmark.json"] },
        }),
      );
      expect(sub.backend).toBe("local");
      const jobId = sub.job_id as string;
      const wait = async (timeout?: number) =>
        structured<Json>(
          await client.callTool({
            name: "wait_for_job",
            arguments: { job_id: jobId, ...(timeout !== undefined ? { timeout_seconds: timeout } : {}) },
          }),
        );

      const first = await wait(1);
      expect(first).toMatchObject({
        job_id: jobId,
        state: "running",
        wait_state: "client_timeout",
        delivery_state: "pending",
        stdout_tail: "started\n",
      });
      // compact: job_state repeats state, stderr_tail is empty, name and host are null
      for (const absent of ["job_state", "stderr_tail", "name", "host"])
        expect(first).not.toHaveProperty(absent);
      expect(first.next_action).toContain("wait_for_job");
      expect(first).not.toHaveProperty("next_command");
      expect(first).not.toHaveProperty("exit_code");
      expect(first).not.toHaveProperty("snapshot");
      expect(first.waited_seconds as number).toBeGreaterThan(0);
      const second = await wait(1);
      expect(second.delivery_state).toBe("pending");
      expect(second.waited_seconds as number).toBeGreaterThan(first.waited_seconds as number);

      writeFileSync(gate, "");
      const done = await wait();
      expect(done.exit_code).toBe(0);
      expect(done.state).toBe("succeeded");
      expect(done.stdout_tail).toBe("started\ndone\n");
      expect((done.parsed_results as Json).correctness).toBe(true);
      expect((done.parsed_results as Json).latency_us).toBe(24.7);
      expect(done).not.toHaveProperty("result");
      // how long it was waited on is the CLI's (below); the finished answer over MCP leaves it out
      for (const absent of [
        "waited_seconds",
        "job_state",
        "stderr_tail",
        "digest",
        "error",
        "name",
        "host",
        "signal",
        "reason",
      ])
        expect(done).not.toHaveProperty(absent);

      // The CLI's --json has every field (0.8's scripts), the snapshot hashes them all, and MCP's answer is it, compact.
      const cli = Bun.spawnSync([BINARY, "wait", jobId, "--json"], { env: box.env, cwd: box.root });
      const full = JSON.parse(cli.stdout.toString()) as Json;
      expect(full).toMatchObject({
        job_state: "succeeded",
        stderr_tail: "",
        digest: [],
        error: null,
        name: null,
        exit_code: 0,
        truncated: false,
        descendants_alive: false,
        stderr_bytes: 0,
        leftovers: { count: 0, processes: [] },
      });
      // MCP's leaves out what says nothing; exit code 0 is the result, so it stays
      for (const absent of [
        "truncated",
        "descendants_alive",
        "stderr_bytes",
        "stdout_dropped_bytes",
        "leftovers",
      ])
        expect(done).not.toHaveProperty(absent);
      expect(done.exit_code).toBe(0);
      expect(full.waited_seconds as number).toBeGreaterThanOrEqual(second.waited_seconds as number);
      expect((done.snapshot as Json).sha256).toBe(sha256Of(resultPart(full)));
      const { waited_seconds: _w, ...cliRest } = compacted(full);
      expect(done).toEqual(cliRest);

      // the same terminal result from the completion feed and the job resource
      const feed = structured<{ completions: Array<{ result: Json }> }>(
        await client.callTool({ name: "wait_for_completions", arguments: { job_ids: [jobId] } }),
      );
      expect(feed.completions[0]?.result).toEqual(resultPart(done));
      const read = await client.readResource({ uri: `awaitless://jobs/${jobId}` });
      const body = JSON.parse((read.contents[0] as { text: string }).text) as { result: Json };
      expect(body.result).toEqual(resultPart(done));
      // a replay is the same answer
      expect(await wait()).toEqual(done);
    }, 60_000);
  });
}
