// Measures what each real client does with our server (test/clients/README.md has the figures and how):
//   bun test/clients/measure.ts [--limits | --limits-only] [claude codex gemini opencode qwen]
// The default run (about a minute a client): the form in which a result reaches the model, the client's
// name and protocol, progress tokens, what a cut looks like (its timeout set to 3 s, progress every 1 s), the
// arguments it adds to our schemas, the methods it calls. --limits also holds one call past the client's real
// limit (our hold 3000 s, a 1000 s job), with its default config and with the one mcp-config writes: up to
// 15 minutes, all clients at once. --startup: Codex with our server starting normally, 6 s and 35 s late and not at all,
// with and without `required = true` in its entry (what `codex exec` does with each).
import { claude } from "./harness/clients/claude.ts";
import { codex } from "./harness/clients/codex.ts";
import { gemini } from "./harness/clients/gemini.ts";
import { opencode } from "./harness/clients/opencode.ts";
import { qwen } from "./harness/clients/qwen.ts";
import { calls, form, initialize, injectedArgs, methods } from "./harness/facts.ts";
import { type ClientSpec, runClient } from "./harness/run-client.ts";
import { ours, SESSION_PROMPT, SHORT_DEFAULTS } from "./harness/scenarios.ts";
import { call } from "./harness/script.ts";

const ALL: Record<string, ClientSpec> = { claude, codex, gemini, opencode, qwen };
const args = process.argv.slice(2);
const limits = args.includes("--limits") || args.includes("--limits-only");
const startup = args.includes("--startup");
const chosen = args.filter((a) => !a.startsWith("--"));
for (const c of chosen)
  if (!(c in ALL)) throw new Error(`unknown client "${c}": one of ${Object.keys(ALL).join(", ")}`);
const clients = (chosen.length > 0 ? chosen : Object.keys(ALL)).map((c) => ALL[c]!);

/** What the model reads of one result (the client's wrapping included), and its whole result block. */
const sizeOf = (r: { bytes: number; text: string } | undefined): string =>
  r === undefined ? "—" : `${Buffer.byteLength(r.text)} B (${r.bytes} B)`;

const secs = (ms: number | undefined) => (ms === undefined ? "—" : `${(ms / 1000).toFixed(1)} s`);

/** The cut run: the client's timeout 3 s, our progress every `progressSeconds`. */
function cutRun(client: ClientSpec, progressSeconds: number) {
  return runClient(client, {
    prompt: SESSION_PROMPT,
    steps: [
      call("run", { command: "echo hello-from-job-$((6*7))" }),
      call("run", {
        command: "echo compiling main.c; echo 'main.c:3:7: error: expected ; before }' >&2; exit 3",
      }),
      call("run", { command: "echo started; sleep 8; echo slow-check-$((6*7))" }),
      call("wait_for_job", (ctx) => ({ job_id: ctx.jobId() })),
      call("wait_for_job", (ctx) => ({ job_id: ctx.jobId() })),
    ],
    defaults: { ...SHORT_DEFAULTS, progress_interval_seconds: progressSeconds },
    clientTimeoutSeconds: 3,
    timeoutMs: 150_000,
  });
}

/** How long a wait stayed open, and whether the client cut it (notifications/cancelled while it was open). */
function waitOutcome(run: Awaited<ReturnType<typeof runClient>>): string {
  const wait = calls(run.mcp).find((c) => c.tool === "wait_for_job");
  if (wait === undefined) return "no wait reached the server";
  if (wait.cancelledAt !== undefined)
    return `cut at ${secs(wait.cancelledAt - wait.sentAt)}, notifications/cancelled`;
  return `not cut (answered after ${secs(wait.answeredAt === undefined ? undefined : wait.answeredAt - wait.sentAt)})`;
}

async function shape(client: ClientSpec): Promise<string[]> {
  const run = await cutRun(client, 1);
  try {
    const results = ours(run.results);
    const seen = calls(run.mcp);
    const quick = seen[0];
    const init = initialize(run.mcp);
    const outcome = waitOutcome(run);
    // Not cut with progress every second: again with progress every 10 s, to tell progress apart.
    let sparse = "";
    if (!outcome.startsWith("cut")) {
      const again = await cutRun(client, 10);
      sparse = `; with progress every 10 s: ${waitOutcome(again)}`;
      again.dispose();
    }
    return [
      client.label,
      init.client,
      init.protocol,
      quick?.result && results[0] ? form(results[0], quick.result) : "—",
      ...[0, 1, 2].map((i) => sizeOf(results[i])),
      seen.every((c) => c.progressToken) ? "yes" : seen.some((c) => c.progressToken) ? "some calls" : "no",
      `${outcome}${sparse}`,
      JSON.stringify((results[3]?.text ?? "").slice(0, 120)),
      injectedArgs(run).join(", ") || "none",
      methods(run.mcp).join(", "),
    ];
  } finally {
    run.dispose();
  }
}

/** Holds one wait far past the client's limit: how long it stayed open, and how it ended. */
async function limit(client: ClientSpec, clientTimeoutSeconds: number | undefined): Promise<string> {
  const started = Date.now();
  const run = await runClient(client, {
    prompt: SESSION_PROMPT,
    steps: [
      call("run", { command: "echo started; sleep 1000; echo slow-check-$((6*7))" }),
      call("wait_for_job", (ctx) => ({ job_id: ctx.jobId() })),
    ],
    defaults: { inline_timeout_seconds: 2 },
    holdSeconds: 3000,
    clientTimeoutSeconds,
    timeoutMs: 900_000,
  });
  try {
    const wait = calls(run.mcp).find((c) => c.tool === "wait_for_job");
    if (wait === undefined) return `no wait reached the server (${run.stderr.slice(-200)})`;
    const back = run.model.main().find((r) => ours(r.turn!.results).length >= 2);
    const cancelled =
      wait.cancelledAt === undefined
        ? ""
        : `, notifications/cancelled at ${secs(wait.cancelledAt - wait.sentAt)}`;
    if (back === undefined)
      return `still open after ${secs(started + run.durationMs - wait.sentAt)}${cancelled}`;
    const text = JSON.stringify(ours(back.turn!.results)[1]!.text.slice(0, 100));
    return `cut: the model read it ${secs(back.at - wait.sentAt)} after the call${cancelled}: ${text}`;
  } finally {
    run.dispose();
  }
}

const header = [
  "client",
  "clientInfo",
  "opens with",
  "a quick success reaches the model as",
  "quick success: what the model reads (its result block)",
  "failure",
  "pending answer",
  "progressToken",
  "a wait, its timeout 3 s, progress every 1 s",
  "what the model read for that wait",
  "arguments it adds to our schema",
  "methods it called",
];
/**
 * One `codex exec` session: did its model get our tools, did the call reach us, how did Codex end (without our
 * tools the scripted model answers an error, so Codex exits 1 there: it is the stderr that tells Codex's own stop).
 */
async function codexStart(
  required: boolean,
  start: "normal" | "6 s late" | "35 s late" | "fails",
): Promise<string[]> {
  const run = await runClient(codex, {
    prompt: SESSION_PROMPT,
    steps: [call("run", { command: "echo hello-from-job-$((6*7))" })],
    defaults: SHORT_DEFAULTS,
    required,
    serverStart:
      start === "normal"
        ? undefined
        : start === "fails"
          ? { fails: true }
          : { delaySeconds: Number.parseInt(start, 10) },
    timeoutMs: 120_000,
  });
  try {
    const first = run.model.main()[0];
    // our initialize answer (Codex opens with initialize); its time against the first model request
    const t0 = run.mcp.find((t) => t.dir === "out" && t.msg?.result?.serverInfo !== undefined)?.at;
    const offered = first?.turn?.tools.some((t) => t.name.includes("awaitless")) ?? false;
    const ranJob = calls(run.mcp).some((c) => c.tool === "run");
    const line = (
      run.stderr
        .trim()
        .split("\n")
        .find((l) => /mcp|awaitless|required/i.test(l)) ?? ""
    ).slice(0, 160);
    return [
      required ? "`required = true`" : "not required",
      start,
      first === undefined ? "no model request" : `${offered ? "yes" : "no"}`,
      ranJob ? "yes" : "no",
      t0 === undefined || first === undefined ? "—" : secs(first.at - t0),
      `${run.exitCode}${run.timedOut ? " (timed out)" : ""}`,
      JSON.stringify(line),
    ];
  } finally {
    run.dispose();
  }
}

if (startup) {
  const rows: string[][] = [];
  for (const required of [false, true])
    for (const start of ["normal", "6 s late", "35 s late", "fails"] as const)
      rows.push(await codexStart(required, start));
  console.log(
    "| entry | our server | first model request offers our tools | `run` reached us | our initialize answered → first model request | codex exit | stderr |\n|---|---|---|---|---|---|---|",
  );
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  process.exit(0);
}

if (!args.includes("--limits-only")) {
  const rows: string[][] = [];
  for (const c of clients) rows.push(await shape(c));
  console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
  for (const r of rows) console.log(`| ${r.map((x) => x.replaceAll("|", "\\|")).join(" | ")} |`);
}

if (limits) {
  const jobs = clients.flatMap((c) => [
    limit(c, 0).then((r) => [c.label, "its default", r]),
    limit(c, undefined).then((r) => [c.label, "as mcp-config writes it", r]),
  ]);
  console.log("\n| client | config | one held wait (our hold 3000 s, a 1000 s job) |\n|---|---|---|");
  for (const r of await Promise.all(jobs)) console.log(`| ${r.join(" | ")} |`);
}
