// Where a job runs: the one resolution of backend and host shared by run, submit and every MCP launch tool.
import { describe, expect, test } from "bun:test";
import { capabilitiesOf } from "../../src/backends/capabilities.ts";
import { AwaitlessError, useHintTable } from "../../src/core/model/errors.ts";
import type { BackendName } from "../../src/core/model/job.ts";
import { resolveTarget } from "../../src/core/service/launch-request.ts";
import { HINTS } from "../../src/hints.ts";

useHintTable(HINTS);

const hostBackends = { cluster: "slurm", box: "ssh" } as const;

function target(
  req: { backend?: BackendName; host?: string },
  defaults: { backend?: BackendName; host?: string | null } = {},
) {
  return resolveTarget(req, {
    backend: defaults.backend ?? "local",
    host: defaults.host ?? null,
    hostBackends,
    capabilitiesOf,
  });
}

function refusal(f: () => unknown): AwaitlessError {
  try {
    f();
  } catch (e) {
    if (e instanceof AwaitlessError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("resolveTarget", () => {
  const cases: [string, Parameters<typeof target>[0], Parameters<typeof target>[1], string, string | null][] =
    [
      ["nothing named: the default backend", {}, {}, "local", null],
      ["--host of an unconfigured alias: ssh", { host: "gpu" }, {}, "ssh", "gpu"],
      ["--host of a Slurm host: slurm", { host: "cluster" }, {}, "slurm", "cluster"],
      ["--host of an SSH host: ssh", { host: "box" }, {}, "ssh", "box"],
      ["an explicit backend wins over the host's", { backend: "ssh", host: "cluster" }, {}, "ssh", "cluster"],
      [
        "[defaults] backend = local does not keep --host local",
        { host: "cluster" },
        { backend: "local" },
        "slurm",
        "cluster",
      ],
      [
        "a remote default backend applies to an unconfigured host",
        { host: "gpu" },
        { backend: "slurm", host: "cluster" },
        "slurm",
        "gpu",
      ],
      [
        "the host's backend wins over a remote default",
        { host: "box" },
        { backend: "slurm", host: "cluster" },
        "ssh",
        "box",
      ],
      ["a remote default with its default host", {}, { backend: "ssh", host: "box" }, "ssh", "box"],
      [
        "the default host runs with its own backend",
        {},
        { backend: "ssh", host: "cluster" },
        "slurm",
        "cluster",
      ],
      ["--backend with the default host", { backend: "slurm" }, { host: "cluster" }, "slurm", "cluster"],
      ["a local default ignores the default host", {}, { backend: "local", host: "cluster" }, "local", null],
      [
        "--backend local ignores the default host",
        { backend: "local" },
        { backend: "ssh", host: "box" },
        "local",
        null,
      ],
    ];
  for (const [what, req, defaults, backend, host] of cases) {
    test(what, () => {
      expect(target(req, defaults)).toEqual({ backend: backend as BackendName, host });
    });
  }

  test("--backend local with --host is refused, saying both ways out", () => {
    const e = refusal(() => target({ backend: "local", host: "cluster" }));
    expect(e.code).toBe("invalid_argument");
    expect(e.message).toBe("host cluster was given with the local backend");
    expect(e.hint).toContain("drop --backend local");
    expect(e.hint).toContain("drop --host");
  });

  test("a remote backend without any host is refused", () => {
    expect(refusal(() => target({ backend: "ssh" })).message).toBe("the ssh backend needs a host");
    expect(refusal(() => target({}, { backend: "slurm" })).message).toContain("[defaults] backend");
  });

  test("an empty host name is refused, not replaced by the default host", () => {
    expect(refusal(() => target({ host: "" }, { backend: "ssh", host: "box" })).message).toContain("empty");
  });

  test("a host named like an Object property is just a host", () => {
    expect(target({ host: "constructor" })).toEqual({ backend: "ssh", host: "constructor" });
  });
});
