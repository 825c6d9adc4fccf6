// The hint table (src/hints.ts): every action core names is worded for both surfaces, each in its own language,
// and an error carrying an action shows the installed wording on each surface.
import { describe, expect, test } from "bun:test";
import { AwaitlessError, hint, useHintTable } from "../../src/core/model/errors.ts";
import { HINTS } from "../../src/hints.ts";
import { TOOLS } from "../../src/mcp/tools/catalog.ts";

/** CLI wording: an awaitless command line or a --flag. */
const CLI_WORDS = /\bawaitless [a-z]|(^|[\s(`'"/])--[a-z]/;
const MCP_WORDS = new RegExp(
  `\\b(${Object.keys(TOOLS)
    .filter((name) => name !== "run")
    .join("|")}|MCP)\\b`,
);
const ARGS = {
  job_id: "job_01ARZ3NDEKTSV4RRFFQ69G5FAV",
  name: "q1",
  target: "gpu",
  host: "gpu",
  max: 10,
  concurrency: 2,
};

describe("hint table", () => {
  for (const [action, word] of Object.entries(HINTS)) {
    test(`${action}: the CLI sentence names no MCP tool, the MCP one no command or flag`, () => {
      for (const backend of ["ssh", "slurm"]) {
        const { cli, mcp } = word({ ...ARGS, backend });
        expect(cli.length).toBeGreaterThan(5);
        expect(mcp.length).toBeGreaterThan(5);
        expect(cli.match(MCP_WORDS)?.[0] ?? null).toBeNull();
        expect(mcp.match(CLI_WORDS)?.[0] ?? null).toBeNull();
        expect(`${cli}\n${mcp}`).not.toContain("undefined");
      }
    });
  }

  test("an error with an action shows each surface its own sentence", () => {
    useHintTable(HINTS);
    const e = new AwaitlessError(
      "duplicate_active_job",
      "already running",
      hint("wait_for_duplicate", { job_id: "job_X" }),
    );
    expect(e.hint).toBe("wait for it (awaitless wait job_X) instead of starting it twice");
    expect(e.hintFor("mcp")).toStartWith('Call wait_for_job with {"job_id":"job_X"}');
    expect(e.toWire("mcp").hint).toBe(e.mcpHint);
  });
});
