// Through the compiled binary: redaction that cannot be cut around — a secret split across `logs --follow`
// chunks, cut by a max_bytes window or the log cap's head, used as a JSON key, holding control characters, or
// typed into argv never shows (not even a 4+ character piece of it) in CLI or MCP output.
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";
import { structured, textOf } from "../mcp/harness.ts";
import { connectStdio } from "../mcp/stdio-client.ts";

const SECRET = "Zq7vKp2XwR9tLm4NbY6hJc3DfG";
const sb = new Sandbox({ AWL_S: SECRET });
afterAll(() => sb.cleanup());

/** The longest piece of `secret` that appears in `text`. */
function exposed(text: string, secret = SECRET): number {
  for (let len = secret.length; len > 0; len--) {
    for (let i = 0; i + len <= secret.length; i++) if (text.includes(secret.slice(i, i + len))) return len;
  }
  return 0;
}

describe("logs --follow", () => {
  test("a secret written in two parts, with a pause between, never appears", async () => {
    const go = join(sb.root, "go");
    // The first part follows a line long enough that follow prints something before the pause.
    const script =
      'printf "READY-%s" "$(printf "%060d" 0)"; printf "%s" "$' +
      '{AWL_S%?????????????}"; ' +
      `while [ ! -e '${go}' ]; do sleep 0.05; done; printf "%s\\n" "\${AWL_S#?????????????}"; echo after`;
    const id = sb.submit(["sh", "-c", script], ["--secret-env", "AWL_S"]);
    const p = sb.spawn(["logs", "--follow", id]);
    let out = "";
    const reader = (async () => {
      const dec = new TextDecoder();
      for await (const chunk of p.stdout) out += dec.decode(chunk, { stream: true });
    })();
    try {
      await until("follow printing the first chunk", () => out.includes("READY-"));
      writeFileSync(go, "");
      expect(await p.exited).toBe(0);
      await reader;
    } finally {
      p.kill();
    }
    expect(out).toContain("[REDACTED]\nafter\n");
    expect(exposed(out)).toBeLessThan(4);
  });
});

describe("cut windows", () => {
  // One long line: padding, the secret, then 40 bytes, so a window of the last 41–65 bytes cuts the secret.
  const script = 'echo first; printf "%0200d%s%040d\\n" 0 "$AWL_S" 0; echo last';
  const id = sb.submit(["sh", "-c", script], ["--secret-env", "AWL_S"]);
  const windows = [44, 48, 52, 56, 60, 63];

  test("CLI run and wait tails under a small max_return_bytes", () => {
    try {
      for (const mb of windows) {
        sb.writeConfig(`[defaults]\nmax_return_bytes = ${mb}\n`);
        const r = sb.run(["run", "--json", "--secret-env", "AWL_S", "--", "sh", "-c", script]);
        expect(r.json.result.state).toBe("succeeded");
        // The window did cut the long line.
        expect(r.json.result.stdout_tail).not.toContain("0".repeat(150));
        expect(exposed(r.stdout)).toBeLessThan(4);
        expect(exposed(sb.run(["wait", r.json.job_id]).stdout)).toBeLessThan(4);
      }
    } finally {
      sb.writeConfig("");
    }
  });

  test("MCP get_job_logs max_bytes (tail and from_line reads)", async () => {
    const conn = await connectStdio("modern", sb.env, sb.work);
    try {
      for (const mb of windows) {
        for (const extra of [{}, { from_line: 2 }, { tail_lines: 2 }, { grep: "0000" }]) {
          const r = await conn.client.callTool({
            name: "get_job_logs",
            arguments: { job_id: id, stream: "stdout", max_bytes: mb, ...extra },
          });
          const text = textOf(r) + JSON.stringify(structured(r));
          expect(text).not.toContain("0".repeat(150));
          expect(exposed(text)).toBeLessThan(4);
        }
      }
    } finally {
      await conn.close();
    }
  });

  test("the log cap's head ends, and its tail starts, inside a secret", () => {
    const capped = new Sandbox({ AWL_S: SECRET });
    try {
      // log_cap_bytes 8192: the head keeps the first 1024 bytes (13 of them the secret's first half); a burst
      // like this one leaves the last 3584 bytes (half the tail budget) in the tail, 13 bytes into the second copy.
      capped.writeConfig("[defaults]\nlog_cap_bytes = 8192\n");
      const script =
        'printf "%01011d%s\\n" 0 "$AWL_S"; i=0; while [ $i -lt 400 ]; do printf "%049d\\n" $i; i=$((i+1)); done; ' +
        'printf "%s%03570d\\n" "$AWL_S" 0';
      const cid = capped.submit(["sh", "-c", script], ["--secret-env", "AWL_S"]);
      const r = capped.run(["wait", "--json", cid]);
      expect(r.json.result.state).toBe("succeeded");
      const outputs = [
        r.stdout,
        capped.run(["logs", cid]).stdout,
        capped.run(["logs", "--lines", "1-3", cid]).stdout,
        capped.run(["logs", "--grep", "0000", cid]).stdout,
        capped.run(["logs", "--json", cid]).stdout,
      ];
      expect(outputs[1]).toContain("[REDACTED]\n[… ");
      expect(outputs[1]).toContain("dropped by the log cap");
      for (const o of outputs) expect(exposed(o)).toBeLessThan(4);
    } finally {
      capped.cleanup();
    }
  });
});

describe("secrets in keys, control characters and argv", () => {
  test("a JSON artifact whose key is the secret", () => {
    const r = sb.run(
      [
        "run",
        "--json",
        "--secret-env",
        "AWL_S",
        "--artifact",
        "out.json",
        "--",
        "sh",
        "-c",
        `printf '{"%s": 1, "ok": "%s"}' "$AWL_S" "$AWL_S" > out.json`,
      ],
      {},
    );
    expect(r.json.result.artifacts[0].content).toEqual({ "[REDACTED]": 1, ok: "[REDACTED]" });
    expect(exposed(r.stdout)).toBeLessThan(4);
    expect(exposed(sb.run(["wait", "--json", r.json.job_id]).stdout)).toBeLessThan(4);
  });

  test("secrets holding CRLF or escape sequences are redacted as cleaned", () => {
    const crlf = "Ab3\r\nXy9KqLm7Pz";
    const esc = "Qw5\x1b[1mEr7Ty8Ui";
    const args = ["--secret-env", "AWL_C", "--secret-env", "AWL_E"];
    const env = { AWL_C: crlf, AWL_E: esc };
    const r = sb.run(["run", "--json", ...args, "--", "sh", "-c", 'printf "%s\\n%s\\n" "$AWL_C" "$AWL_E"'], {
      env,
    });
    expect(r.json.result.state).toBe("succeeded");
    const id = r.json.job_id;
    const outputs = [r.stdout, sb.run(["logs", id]).stdout, sb.run(["logs", "--json", id]).stdout];
    for (const o of outputs) {
      expect(o).not.toContain("Xy9KqLm7Pz");
      expect(o).not.toContain("Qw5Er7Ty8Ui");
      expect(o).not.toContain("Er7Ty8Ui");
    }
  });

  test("a secret typed into argv is not shown by list, status, inspect or list_jobs", async () => {
    const r = sb.run(["run", "--json", "--secret-env", "AWL_S", "--", "echo", SECRET]);
    expect(r.json.result.state).toBe("succeeded");
    const id = r.json.job_id;
    const outputs = [
      r.stdout,
      sb.run(["list"]).stdout,
      sb.run(["list", "--json"]).stdout,
      sb.run(["status", id]).stdout,
      sb.run(["status", "--json", id]).stdout,
      sb.run(["inspect", id]).stdout,
      sb.run(["inspect", "--json", id]).stdout,
    ];
    const conn = await connectStdio("modern", sb.env, sb.work);
    try {
      const listed = await conn.client.callTool({ name: "list_jobs", arguments: {} });
      outputs.push(textOf(listed) + JSON.stringify(structured(listed)));
      const st = await conn.client.callTool({ name: "get_job_status", arguments: { job_id: id } });
      outputs.push(textOf(st) + JSON.stringify(structured(st)));
    } finally {
      await conn.close();
    }
    expect(sb.status(id).argv).toEqual(["echo", "[REDACTED]"]);
    for (const o of outputs) expect(exposed(o)).toBeLessThan(4);
  });
});
