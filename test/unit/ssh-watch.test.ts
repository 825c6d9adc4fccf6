// The SSH watch channel's waiters, against a fake host whose channel the test writes: a wait on a job whose exit the
// running channel already reported ends at once (the channel reports a directory again only when it changes).
import { describe, expect, test } from "bun:test";
import { sshExitWatch } from "../../src/backends/slurm/slurm-events.ts";
import type { SshHost } from "../../src/backends/ssh/ssh-host.ts";
import { SshWatch } from "../../src/backends/ssh/ssh-watch.ts";

/** A host whose watch channel is fed by the test: `say` writes lines to the open channel; `opened` counts channels. */
function fakeHost() {
  let feed: ((chunk: Buffer) => void) | null = null;
  const host = {
    opened: 0,
    invalidate() {},
    async session() {
      return {
        async stream(_cmd: string, _stdin: string, onData: (chunk: Buffer) => void) {
          host.opened++;
          feed = onData;
          return { close: () => undefined };
        },
      };
    },
    say(line: string) {
      feed?.(Buffer.from(`${line}\n`));
    },
  };
  return host;
}

/** Resolves once the watch opened its channel (it does so on a timer after the first wait). */
async function channelOpen(host: ReturnType<typeof fakeHost>, count = 1): Promise<void> {
  for (let i = 0; i < 1000 && host.opened < count; i++) await Bun.sleep(1);
  expect(host.opened).toBe(count);
}

const DIR = "/home/u/.awaitless/slurm/jobs/job_A";

describe("SshWatch", () => {
  test("the exit record's report ends the wait; the exit watch returns once, not waiting for another change", async () => {
    const host = fakeHost();
    const watch = new SshWatch(host as unknown as SshHost);
    let ended = false;
    const exitSeen = sshExitWatch(watch)(DIR, 600_000).then(() => {
      ended = true;
    });
    await channelOpen(host);
    host.say("c 1 s");
    await Bun.sleep(0);
    expect(ended).toBe(false);
    host.say("c 1 sx");
    await exitSeen;
    expect(ended).toBe(true);
    expect(watch.sawExit(DIR)).toBe(true);
    watch.close();
  });

  test("a wait made after the channel reported the exit (the job's entry was dropped meanwhile) ends at once", async () => {
    const host = fakeHost();
    const watch = new SshWatch(host as unknown as SshHost);
    const first = watch.wait(DIR, 600_000);
    await channelOpen(host);
    host.say("c 1 s");
    host.say("c 1 sx");
    await first;
    // the ended job's entry is dropped as it has no waiter left; the same channel keeps running for it
    let ended = false;
    const again = watch.wait(DIR, 600_000).then(() => {
      ended = true;
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(ended).toBe(true);
    await again;
    expect(host.opened).toBe(1);
    watch.close();
  });
});
