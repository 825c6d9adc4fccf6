// The binary reads nothing of the directory it runs in at start: a project's .env is not loaded into its
// environment (a job would inherit it) and a bunfig.toml there neither preloads code nor changes the runtime.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

describe("files in the working directory", () => {
  test("a .env there is not loaded: the job sees only what the caller's environment has", () => {
    writeFileSync(join(sb.work, ".env"), "AWL_DOTENV_PROBE=from-dotenv\n");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template
    const r = sb.run(["run", "--json", "--", "sh", "-c", 'echo "probe=${AWL_DOTENV_PROBE:-unset}"']);
    expect(r.code).toBe(0);
    expect(r.json.stdout_tail).toBe("probe=unset\n");
  });

  test("a bunfig.toml there preloads nothing", () => {
    const marker = join(sb.root, "preloaded");
    writeFileSync(
      join(sb.work, "pre.ts"),
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "yes");\n`,
    );
    writeFileSync(join(sb.work, "bunfig.toml"), 'preload = ["./pre.ts"]\n');
    const r = sb.run(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("awaitless ");
    expect(existsSync(marker)).toBe(false);
  });
});
