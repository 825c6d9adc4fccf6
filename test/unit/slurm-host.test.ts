// Which Slurm hosts run the scheduler commands on this machine: transport = "local", else the localhost name rule.
import { describe, expect, test } from "bun:test";
import { isLocalLoginNode } from "../../src/backends/slurm/slurm-host.ts";
import { parseConfigText } from "../../src/config/config.ts";

const hostsOf = (toml: string) => parseConfigText(toml, "config.toml").hosts ?? {};

describe("isLocalLoginNode", () => {
  test('transport = "local" makes any host name local, even with SSH fields', () => {
    const hosts = hostsOf('[hosts.cluster]\ntransport = "local"\nhostname = "login1"\n');
    expect(isLocalLoginNode("cluster", hosts)).toBe(true);
  });

  test("an SSH transport makes even localhost remote", () => {
    expect(isLocalLoginNode("localhost", hostsOf('[hosts.localhost]\ntransport = "openssh"\n'))).toBe(false);
    expect(isLocalLoginNode("localhost", hostsOf('[hosts.localhost]\ntransport = "ssh2"\n'))).toBe(false);
  });

  test("without transport: localhost/local with no SSH fields are local (fallback); other names are not", () => {
    expect(isLocalLoginNode("localhost", {})).toBe(true);
    expect(isLocalLoginNode("local", hostsOf('[hosts.local]\nslurm_job_dir = "/scratch/x"\n'))).toBe(true);
    expect(isLocalLoginNode("localhost", hostsOf("[hosts.localhost]\nport = 2222\n"))).toBe(false);
    expect(isLocalLoginNode("cluster", {})).toBe(false);
  });

  test("the config refuses an unknown transport with the accepted ones", () => {
    expect(() => hostsOf('[hosts.c]\ntransport = "rsh"\n')).toThrow(/transport/);
  });
});
