// On a terminal, run and wait show a live line (spinner, state, elapsed) on stderr and clear it before the
// result. A real pseudo-terminal comes from script(1) (util-linux); the job holds on a gate file the test
// creates only after it has seen the live line, so nothing depends on timing.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, Sandbox } from "../helpers/cli.ts";

const SCRIPT = Bun.which("script");
const sb = new Sandbox();
afterAll(() => sb.cleanup());

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
const CLEAR = "\r\x1b[K";
const COLOR_RE = /\x1b\[3\dm/;

/** Runs the binary on a pty; `onOutput` sees everything so far and may act (create the gate) once. */
async function onTty(args: string[], env: Record<string, string>, gate: string) {
  const proc = Bun.spawn([SCRIPT!, "-qec", [BINARY, ...args].map(quote).join(" "), "/dev/null"], {
    cwd: sb.work,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) {
      text += decoder.decode(chunk, { stream: true });
      if (!existsSync(gate) && /running \d+s/.test(text)) writeFileSync(gate, "");
    }
    return { code: await proc.exited, text };
  } finally {
    proc.kill("SIGKILL");
  }
}

const gated = (gate: string) => [
  "sh",
  "-c",
  `while [ ! -f ${quote(gate)} ]; do sleep 0.05; done; echo finished`,
];

describe.skipIf(!SCRIPT)("live line on a terminal", () => {
  const { NO_COLOR: _off, ...colorEnv } = sb.env;

  test("run: a spinner with the state and elapsed time, cleared before the coloured result", async () => {
    const gate = join(sb.work, "gate-run");
    const r = await onTty(["run", "--", ...gated(gate)], { ...colorEnv, TERM: "xterm" }, gate);
    expect(r.code).toBe(0);
    const frames = r.text.split(CLEAR);
    // frames[0] is empty (the first write starts with the clear); then live frames; the last part is the result.
    const live = frames.slice(1, -1);
    expect(live.length).toBeGreaterThan(0);
    for (const frame of live) expect(frame).toMatch(/^\x1b\[36m[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\x1b\[39m running \d+s/);
    const result = frames.at(-1)!;
    expect(result).toMatch(/^job_[0-9A-Z]{26} \x1b\[32msucceeded\x1b\[39m after /);
    expect(result).toContain("finished");
  });

  test("NO_COLOR keeps the live line but drops colour", async () => {
    const gate = join(sb.work, "gate-nocolor");
    const r = await onTty(["run", "--", ...gated(gate)], { ...sb.env, TERM: "xterm" }, gate);
    expect(r.code).toBe(0);
    expect(r.text).toContain(CLEAR);
    expect(r.text).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] running \d+s/);
    expect(r.text).not.toMatch(COLOR_RE);
  });

  test("wait shows the live line too; --json never does", async () => {
    const gate = join(sb.work, "gate-wait");
    const id = sb.submit(gated(gate));
    const r = await onTty(["wait", id], { ...colorEnv, TERM: "xterm" }, gate);
    expect(r.code).toBe(0);
    expect(r.text).toMatch(/running \d+s/);
    expect(r.text.split(CLEAR).at(-1)).toContain(`${id} \x1b[32msucceeded`);

    const gate2 = join(sb.work, "gate-json");
    const id2 = sb.submit(gated(gate2));
    writeFileSync(gate2, "");
    const j = await onTty(["wait", "--json", id2], { ...colorEnv, TERM: "xterm" }, gate2);
    expect(j.code).toBe(0);
    expect(j.text).not.toContain(CLEAR);
    expect(JSON.parse(j.text.replaceAll("\r\n", "\n")).state).toBe("succeeded");
  });
});

if (!SCRIPT) {
  const why = "script(1) is missing (apt-get install -y bsdutils)";
  if (process.env.AWAITLESS_REQUIRE_ALL === "1")
    test("live line on a terminal", () => {
      throw new Error(why);
    });
  else console.warn(`skipping live-line tests: ${why}`);
}
