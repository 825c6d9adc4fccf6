// Text other people wrote reaches a terminal escaped: artifact file names a job created (an OSC 52 clipboard write, a
// title change), a cwd that clears the screen, C1 controls and bidi overrides in job names, hosts and IDs of an
// imported store, env values in inspect's spec, digest lines, error details. Each command runs through the binary
// under a pty (script(1)), and what the terminal receives must hold no ESC, no C1 control and no bidi override.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { row08, write08Store } from "../helpers/store08.ts";
import { onTty, rawAt, scriptAvailable } from "../helpers/tty.ts";

const OSC52 = "\x1b]52;c;cHduZWQ=\x07";
const TITLE = "\x1b]0;owned\x07";
const CLEAR = "\x1b[2J\x1b[H";
const C1_CSI = "\u009b31m";
const BIDI = "\u202e\u2066";

const boxes: Sandbox[] = [];
afterAll(() => {
  for (const b of boxes) b.cleanup();
});

function expectClean(what: string, screen: string): void {
  expect(`${what}: ${rawAt(screen)}`).toBe(`${what}: clean`);
}

describe("human output on a terminal", () => {
  if (!gateOnAvailability("terminal-escape tests (a pty through script(1))", scriptAvailable())) return;

  test("artifact names, cwd, job names, env values, digest lines: escaped in wait, status, inspect, list", () => {
    const sb = new Sandbox();
    boxes.push(sb);
    const cwd = join(sb.work, `dir${CLEAR}`);
    mkdirSync(cwd);
    const name = `build${C1_CSI}${BIDI}`;
    const job = [
      "sh",
      "-c",
      `mkdir -p out && : > "out/a${OSC52}.json" && : > "out/b${TITLE}" && printf 'error: bad ${BIDI} thing\\n' >&2 && exit 3`,
    ];
    const run = sb.run(
      ["run", "--json", "--name", name, "--env", `X=${C1_CSI}`, "--artifact", "out/*", "--", ...job],
      { cwd },
    );
    expect(run.code).toBe(3);
    const id = run.json.job_id as string;
    // the fields really hold the text (escaped on a terminal only)
    expect(run.json.artifacts.map((a: { path: string }) => a.path).join(" ")).toContain(OSC52);
    const wait = onTty(sb, ["wait", id]);
    expect(wait.code).toBe(3);
    expect(wait.screen).toContain("\\u001b]52;c;cHduZWQ=\\u0007");
    expect(wait.screen).toContain("\\u202e");
    for (const [what, args] of [
      ["wait", ["wait", id]],
      ["status", ["status", id]],
      ["inspect", ["inspect", id]],
      ["list", ["list"]],
      ["run", ["run", "--name", name, "--artifact", "out/*", "--", ...job]],
    ] as const) {
      const r = onTty(sb, [...args], cwd);
      expect(r.screen).toContain(id.slice(0, 4));
      expectClean(what, r.screen);
    }
    expect(onTty(sb, ["status", id]).screen).toContain("\\u001b[2J");
    expect(onTty(sb, ["list"]).screen).toContain("\\u009b31m\\u202e\\u2066");
  });

  test("an imported store's IDs, hosts and names, and error details: escaped", () => {
    const sb = new Sandbox();
    boxes.push(sb);
    const from = join(sb.root, "from");
    write08Store(from, [
      row08(from, { job_id: `job_${OSC52}` }),
      row08(from, { name: `n${TITLE}`, backend: "ssh", host: `h${C1_CSI}${BIDI}` }),
    ]);
    const imp = onTty(sb, ["import", "--from", from]);
    expect(imp.code).toBe(0);
    expectClean("import", imp.screen);
    expect(imp.screen).toContain("skipped");
    expectClean("list", onTty(sb, ["list"]).screen);
    const bad = onTty(sb, ["wait", "--timeout", `1${TITLE}`, "job_01JD0000000000000000000000"]);
    expect(bad.code).toBe(2);
    expect(bad.screen).toContain("error:");
    expectClean("an error", bad.screen);
    const logDir = onTty(sb, ["run", "--log-dir", `rel${OSC52}`, "--", "true"]);
    expectClean("an error", logDir.screen);
  });
});
