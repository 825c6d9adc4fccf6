// The wrapper's fragments (src/wrapper/job/*.sh) one at a time, sourced alone (with only the fragments each one uses)
// under sh, dash and busybox, each function driven in a temp directory: records written and refused, sizes, the log
// cap's rotation, the wakeable sleep and its back-off, the monitor's schedule, the exit record's padding, queue
// tickets counted by glob, a parent's outcome, the start-up checks, `started` read back. The whole wrapper is run in
// test/wrapper.
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assemble } from "../../src/wrapper/shell-text.ts";

const tmp = mkdtempSync(join(tmpdir(), "awl-fragments-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const shells = [
  ["sh", Bun.which("sh")],
  ["dash", Bun.which("dash")],
  ["busybox", Bun.which("busybox")],
].filter((s): s is [string, string] => s[1] !== null);

const JOB_PARTS = readdirSync(join(import.meta.dir, "../../src/wrapper/job")).map((f) => `job/${f}`);

/** The fragments as the wrapper includes them (their own includes spliced in). */
const source = (names: string[]) => names.map((n) => assemble(`# awaitless:include ${n}\n`)).join("");

let dirs = 0;
/** A fresh directory for one run. */
function scratch(): string {
  const dir = join(tmp, `d${dirs++}`);
  mkdirSync(dir);
  return dir;
}

/** Runs `body` after the fragments, in `cwd`, under `shell`; a run that does not end within 20 s fails. */
function run(
  shell: string,
  fragments: string[],
  body: string,
  cwd = scratch(),
): { code: number; out: string; err: string; cwd: string } {
  const argv = shell.endsWith("busybox") ? ["sh", "-c"] : ["-c"];
  const r = spawnSync(shell, [...argv, `${source(fragments)}${body}`], {
    cwd,
    encoding: "utf8",
    timeout: 20_000,
  });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr, cwd };
}

/**
 * The monitor's schedule (job/monitor.sh) without its naps, from awl_monitor_init with the wrapper's default lengths
 * (a 1 s tick, 30 s heartbeat, 15 s longest check gap): `body` runs at each wake-up until `untilCs`, then `report`.
 */
function schedule(shell: string, untilCs: number, body: string, report: string) {
  return run(
    shell,
    ["job/monitor.sh"],
    `AWL_TICK=1 AWL_HEARTBEAT=30 AWL_CHECK_MAX=15 AWL_TIMEOUT=0 AWL_SCHEDULER='' awl_started_at=0 awl_started_cs=0
awl_rotate_at=0
awl_monitor_init
pid=1 awl_cs=0
while [ "$awl_cs" -le ${untilCs} ]; do
${body}
  awl_next_wake
  awl_cs=$((awl_cs + awl_w))
done
${report}`,
  );
}

describe.each(shells)("wrapper fragments under %s", (_name, shell) => {
  test("each fragment sourced alone only defines: no output, no error", () => {
    expect(JOB_PARTS.length).toBeGreaterThanOrEqual(10);
    for (const part of JOB_PARTS) {
      expect({ part, ...run(shell, [part], "echo sourced") }).toMatchObject({
        part,
        code: 0,
        out: "sourced\n",
        err: "",
      });
    }
  });

  test("files.sh: awl_put replaces a record whole, through no symlink; awl_stat reads every size with one listing", () => {
    const r = run(
      shell,
      ["job/files.sh"],
      `awl_put rec a=1 b=2 && echo put=$?
ln -s /nonexistent rec2.tmp; awl_put rec2 x=1 && echo stale-tmp-ok
ln -s target link; awl_put link y=1 2>/dev/null || echo refused
printf 12345 >stdout; printf 1234567 >stderr.prev; : >stderr
awl_stat; echo "sizes $sz_out $sz_err $sz_prog $sz_outp $sz_errp"
awl_size stderr.prev; echo "size $awl_sz"`,
    );
    expect(r.err).toBe("");
    expect(r.out).toBe("put=0\nstale-tmp-ok\nrefused\nsizes 5 0 0 0 7\nsize 7\n");
    expect(readFileSync(join(r.cwd, "rec"), "utf8")).toBe("a=1\nb=2\n");
    expect(readFileSync(join(r.cwd, "rec2"), "utf8")).toBe("x=1\n");
    expect(existsSync(join(r.cwd, "target"))).toBe(false);
  });

  test("clock.sh: a trapped signal ends awl_sleep at once, and a wake before it means no sleep", () => {
    const r = run(
      shell,
      ["job/clock.sh"],
      `trap awl_wake USR1
(sleep 0.2; kill -USR1 $$) &
awl_sleep 60; echo "woke=$awl_woke child=[$awl_nap_pid]"
awl_sleep 60; echo "again at once"`,
    );
    expect(r.out).toBe("woke=1 child=[]\nagain at once\n");
  });

  test("clock.sh: awl_hold_nap backs off by doubling up to its cap (never below AWL_TICK) and starts over after a wake", () => {
    const naps = (tick: number, cap: number, wakeAt: number) =>
      run(
        shell,
        ["job/clock.sh"],
        `n=0
awl_sleep() { n=$((n + 1)); printf '%s ' "$1"; [ "$n" != ${wakeAt} ] || awl_woke=1; }
AWL_TICK=${tick} awl_hold=${tick}
i=0; while [ $i -lt 8 ]; do awl_hold_nap ${cap}; i=$((i + 1)); done`,
      ).out;
    expect(naps(1, 8, 3)).toBe("1 2 4 1 2 4 8 8 ");
    expect(naps(1, 60, 0)).toBe("1 2 4 8 16 32 60 60 ");
    expect(naps(10, 8, 0)).toBe("10 10 10 10 10 10 10 10 ");
  });

  test("clock.sh: awl_clock reads /proc/uptime in centiseconds; awl_epoch adds the time since the start", () => {
    const r = run(
      shell,
      ["job/clock.sh"],
      `awl_up_ok=1; awl_clock; read -r u x </proc/uptime; echo "$awl_cs ${"$"}{u%.*}"
awl_started_at=1000 awl_started_cs=$awl_cs; awl_cs=$((awl_cs + 250)); awl_epoch; echo "epoch $awl_t"`,
    );
    const [cs, upSeconds] = r.out.split("\n")[0]!.split(" ").map(Number);
    expect(Math.floor(cs! / 100) - upSeconds!).toBeLessThanOrEqual(1);
    expect(r.out.split("\n")[1]).toBe("epoch 1002");
  });

  test("log-cap.sh: a rotation keeps the head once, the last KEEP bytes as prev, and counts the rest as dropped", () => {
    const text = Array.from({ length: 100 }, (_, i) => `${i}`.padStart(9, "0")).join("\n");
    const dir = scratch();
    writeFileSync(join(dir, "stdout"), text);
    const r = run(
      shell,
      ["job/files.sh", "job/clock.sh", "prelude.sh", "job/log-cap.sh"],
      `pgid='' awl_headcap=25
awl_rotate stdout 0 0 100 && echo "prev=$awl_prev drop=$awl_drop"
printf 'more bytes\\n' >>stdout
sz_out=11 sz_outp=100 o_drop=$awl_drop sz_err=0 sz_errp=0 e_drop=0
awl_cap_trim 50 all && echo "after trim: $sz_out $sz_outp $o_drop"`,
      dir,
    );
    expect(r.err).toBe("");
    expect(r.out).toBe(`prev=100 drop=${text.length - 100}\nafter trim: 0 50 ${text.length + 11 - 50}\n`);
    expect(readFileSync(join(dir, "stdout.head"), "utf8")).toBe(text.slice(0, 25));
    expect(readFileSync(join(dir, "stdout.prev"), "utf8")).toBe(`${text}more bytes\n`.slice(-50));
    expect(readFileSync(join(dir, "stdout.dropped"), "utf8")).toBe(`${text.length + 11 - 50}\n`);
    expect(readFileSync(join(dir, "stdout"), "utf8")).toBe("");
  });

  test("log-cap.sh: a group that does not stop in time leaves the live file whole and asks for another try", () => {
    const dir = scratch();
    writeFileSync(join(dir, "stdout"), "x".repeat(300));
    const r = run(
      shell,
      ["job/files.sh", "job/clock.sh", "prelude.sh", "job/log-cap.sh"],
      `pgid=4242 awl_headcap=25 awl_cap_retry=0
awl_freeze() { return 1; }
sz_out=300 sz_outp=0 o_drop=0 sz_err=0 sz_errp=0 e_drop=0
awl_cap_trim 100
echo "retry=$awl_cap_retry sizes: $sz_out $sz_outp $o_drop"`,
      dir,
    );
    expect(r.err).toBe("");
    expect(r.out).toBe("retry=1 sizes: 300 0 0\n");
    expect(readFileSync(join(dir, "stdout"), "utf8")).toBe("x".repeat(300));
    expect(existsSync(join(dir, "stdout.snap"))).toBe(false);
    expect(existsSync(join(dir, "stdout.prev"))).toBe(false);
  });

  test("monitor.sh: a quiet job's wake-ups and heartbeats in its first two minutes (the schedule idle jobs pay)", () => {
    const r = schedule(
      shell,
      12000,
      `  wakes="$wakes $awl_cs"
  awl_changed=0
  if awl_check_due; then awl_check_next; fi
  if awl_heartbeat_due; then beats="$beats $awl_cs"; awl_hb_at=$awl_cs; fi`,
      `echo "wake-ups:$wakes"
echo "heartbeats:$beats"`,
    );
    expect(r.err).toBe("");
    expect(r.out).toBe(
      "wake-ups: 0 20 420 1220 3020 4520 6020 7520 9020 10520\nheartbeats: 20 3020 6020 9020\n",
    );
  });

  test("monitor.sh: a rotation postponed (the group did not stop in time) is tried again a tick later, forced, though nothing changes", () => {
    const r = schedule(
      shell,
      3100,
      `  awl_changed=0
  if awl_check_due; then
    checks="$checks $awl_cs:$awl_force"
    # the check at 4.2 s had to postpone its rotation (log-cap.sh's awl_rotate)
    [ "$awl_cs" != 420 ] || awl_cap_retry=1
    awl_check_next
  fi
  if awl_heartbeat_due; then awl_hb_at=$awl_cs; fi`,
      `echo "checks (cs:forced):$checks"`,
    );
    expect(r.err).toBe("");
    // a quiet job's checks are 0 20 420 1220 3020 (the schedule above); the postponed one brings a forced check at
    // 520, then the back-off starts again from a tick
    expect(r.out).toBe("checks (cs:forced): 20:0 420:0 520:1 720:0 1120:0 1920:0 3020:0\n");
  });

  test("monitor.sh: a command that ends during the start's check gets no heartbeat; one still running does", () => {
    const monitor = (check: string) =>
      run(
        shell,
        ["job/clock.sh", "job/monitor.sh"],
        `AWL_TICK=1 AWL_HEARTBEAT=30 AWL_CHECK_MAX=15 AWL_TIMEOUT=0 AWL_SCHEDULER='' awl_started_at=0 awl_started_cs=0
awl_up_ok=1 awl_rotate_at=0 awl_wrapper_pid=$$
awl_read_started() { pid=1; }
awl_check() { echo check; awl_changed=1; ${check} }
awl_heartbeat() { echo heartbeat; awl_hb_at=$awl_cs; }
awl_nap() { echo nap; : >monitor.stop; }
awl_monitor; echo stopped`,
      );
    expect(monitor(": >monitor.stop;")).toMatchObject({ err: "", out: "check\nstopped\n" });
    expect(monitor(":;")).toMatchObject({ err: "", out: "check\nheartbeat\nnap\nstopped\n" });
  });

  test("monitor.sh: a command that ends within a fifth of a second costs its monitor no check and no heartbeat", () => {
    const r = run(
      shell,
      ["job/clock.sh", "job/monitor.sh"],
      `AWL_TICK=1 AWL_HEARTBEAT=30 AWL_CHECK_MAX=15 AWL_TIMEOUT=0 AWL_SCHEDULER='' awl_up_ok=1 awl_rotate_at=0
awl_wrapper_pid=$$
awl_clock; awl_started_cs=$awl_cs awl_started_at=0
awl_read_started() { pid=1; }
awl_check() { echo check; }
awl_heartbeat() { echo heartbeat; }
awl_nap() { echo "nap $1"; : >monitor.stop; }
awl_monitor; echo stopped`,
    );
    expect(r.err).toBe("");
    const [nap, ...rest] = r.out.trim().split("\n");
    expect(rest).toEqual(["stopped"]);
    expect(nap).toMatch(/^nap \d+$/);
    expect(Number(nap!.slice(4))).toBeGreaterThanOrEqual(1);
    expect(Number(nap!.slice(4))).toBeLessThanOrEqual(20);
  });

  test("monitor.sh: naps are fractions until sleep refuses one, then whole seconds (no probe at the start)", () => {
    const dir = scratch();
    const bin = join(dir, "bin");
    mkdirSync(bin);
    // a sleep that takes whole seconds only, logging what it was asked
    writeFileSync(
      join(bin, "sleep"),
      `#!/bin/sh\necho "$1" >>"${dir}/asked"\ncase $1 in *.*) exit 1 ;; esac\nexit 0\n`,
      { mode: 0o755 },
    );
    const r = run(
      shell,
      ["job/clock.sh", "job/monitor.sh"],
      `PATH="${bin}:$PATH"
awl_done=0 awl_woke=0 awl_nap_pid='' awl_frac='' awl_short=0.1 awl_kill=none
awl_nap 50; echo "frac=$awl_frac short=$awl_short"
awl_nap 150; echo "frac=$awl_frac"`,
      dir,
    );
    expect(r.err).toBe("");
    expect(r.out).toBe("frac=0 short=1\nfrac=0\n");
    expect(readFileSync(join(dir, "asked"), "utf8")).toBe("0.50\n1\n2\n");
    // a sleep that takes fractions keeps them, and nothing was asked before the first nap
    const real = run(
      shell,
      ["job/clock.sh", "job/monitor.sh"],
      `awl_done=0 awl_woke=0 awl_nap_pid='' awl_frac='' awl_short=0.1 awl_kill=none
awl_nap 5; echo "frac=$awl_frac slept=$awl_slept"`,
    );
    expect(real.out).toBe("frac= slept=0\n");
  });

  test("monitor.sh: awl_next_wake: the timeout's deadline, a tick during a kill or under Slurm, at least 1 cs", () => {
    const wake = (set: string) =>
      run(
        shell,
        ["job/monitor.sh"],
        `AWL_TICK=1 AWL_HEARTBEAT=30 AWL_CHECK_MAX=15 AWL_TIMEOUT=0 AWL_SCHEDULER='' awl_started_at=0 awl_started_cs=0
awl_monitor_init
pid=1 awl_cs=1000 awl_check_at=2500 awl_hb_at=0
${set}
awl_next_wake; echo "$awl_w"`,
      ).out.trim();
    expect(wake("")).toBe("1500");
    expect(wake("AWL_TIMEOUT=12 awl_timeout_at=1200")).toBe("200");
    expect(wake("awl_kill=term")).toBe("100");
    expect(wake("AWL_SCHEDULER=slurm")).toBe("100");
    expect(wake("awl_check_at=900")).toBe("1");
  });

  test("exit.sh: the reservation is 512 bytes, and the record written over it keeps that size and is renamed to exit", () => {
    const r = run(
      shell,
      ["job/files.sh", "job/exit.sh"],
      `awl_reserve_exit && echo reserved
awl_write_exit "exit_code=0
reason=exited" && echo written`,
    );
    expect(r.out).toBe("reserved\nwritten\n");
    const exit = readFileSync(join(r.cwd, "exit"), "utf8");
    expect(exit.length).toBe(512);
    expect(exit.startsWith("exit_code=0\nreason=exited\n")).toBe(true);
    expect(exit.slice(26).trim()).toBe("");
    expect(existsSync(join(r.cwd, "exit.tmp"))).toBe(false);
  });

  test("queue.sh: awl_q_below counts the waiting entries whose ticket is lower, with a few globs", () => {
    const dir = scratch();
    mkdirSync(join(dir, "q", "waiting"), { recursive: true });
    const tickets = [1, 2, 3, 7, 9, 10, 11, 19, 20, 99, 100, 101, 109, 110, 199, 200, 1000, 1234];
    for (const t of tickets) writeFileSync(join(dir, "q", "waiting", `${t}.job_X${t}`), "");
    const probes = [1, 2, 5, 10, 11, 12, 20, 21, 100, 101, 150, 201, 999, 1000, 1235, 5000];
    const r = run(
      shell,
      ["job/queue.sh"],
      `awl_q_root=$PWD/q
for t in ${probes.join(" ")}; do awl_q_below "$t"; printf '%s ' "$awl_q_nb"; done`,
      dir,
    );
    expect(r.err).toBe("");
    expect(r.out).toBe(`${probes.map((p) => tickets.filter((t) => t < p).length).join(" ")} `);
  });

  test("after.sh: a parent's outcome from its records: ok, failed, not ended, its wrapper gone, its final record", () => {
    const dir = scratch();
    const parent = (name: string, files: Record<string, string>) => {
      mkdirSync(join(dir, name));
      for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, name, f), text);
    };
    parent("ok", { exit: "exit_code=0\nreason=exited\n" });
    parent("failed", { exit: "exit_code=3\nreason=exited\n" });
    parent("cancelled", { exit: "exit_code=\nreason=cancelled\n" });
    parent("running", {});
    parent("killed", { started: "wrapper_pid=999999999\nproc_start=1\n" });
    parent("final", { final: "outcome=ok\nattempt=2\n" });
    const r = run(
      shell,
      ["prelude.sh", "job/after.sh"],
      `awl_boot_id=''
for p in ok failed cancelled running killed missing; do awl_a_fin=''; awl_a_outcome "$PWD/$p"; printf '%s=%s ' "$p" "$awl_a_out"; done
awl_a_fin=1; for p in final running; do awl_a_outcome "$PWD/$p"; printf 'final:%s=%s ' "$p" "$awl_a_out"; done`,
      dir,
    );
    expect(r.err).toBe("");
    expect(r.out).toBe(
      "ok=ok failed=failed cancelled=failed running= killed=failed missing=failed final:final=ok final:running= ",
    );
  });

  test("setup.sh: awl_enter removes a symlink under a name the wrapper writes; a bad number in spec.sh fails the launch", () => {
    const dir = scratch();
    symlinkSync("/nonexistent", join(dir, "started"));
    const r = run(
      shell,
      ["job/files.sh", "job/setup.sh"],
      `awl_launch_failed() { echo "launch failed: $*"; exit 126; }
awl_enter "$PWD" 2>/dev/null; [ -h started ] || echo "no symlink; root=$awl_root"
AWL_TIMEOUT=12 AWL_TICK=0 AWL_LOG_CAP=800; awl_spec_checked 1; echo "tick=$AWL_TICK grace=$AWL_GRACE rotate_at=$awl_rotate_at"
AWL_GRACE=ten; awl_spec_checked 1`,
      dir,
    );
    expect(r.out).toBe(
      `no symlink; root=${dir}\ntick=1 grace=10 rotate_at=350\nlaunch failed: AWL_GRACE='ten' in spec.sh is not a non-negative integer\n`,
    );
    expect(r.code).toBe(126);
  });

  test("command.sh: awl_read_started takes pid, pgid and pid_start, and refuses 0, 1 or a word; awl_outcome reads the markers", () => {
    const read = (started: string) =>
      run(
        shell,
        ["job/files.sh", "job/command.sh"],
        `printf '%s\\n' ${started} >started
awl_bad_started='' awl_cg_track=/cg pid='' pgid=''
if awl_read_started 2>/dev/null; then echo "read $pid $pgid $pid_start [$awl_cg_track]"; else echo "refused [$pid]"; fi`,
      ).out;
    expect(read("pid=42 pgid=42 pid_start=77 tracking=cgroup")).toBe("read 42 42 77 [/cg]\n");
    expect(read("pid=42 pgid=42 pid_start=77 tracking=environment")).toBe("read 42 42 77 []\n");
    expect(read("pid=1 pgid=1")).toBe("refused []\n");
    expect(read("pid=42 pgid=0")).toBe("refused []\n");
    expect(read("pid=42 pgid=-1")).toBe("refused []\n");
    const outcome = (markers: string) =>
      run(
        shell,
        ["job/files.sh", "job/command.sh"],
        `awl_finish() { echo "finish [$1] $2"; exit 0; }; awl_launch_failed() { echo "launch failed"; exit 0; }
awl_ext_term=0 awl_dir=$PWD; for f in ${markers}; do : >"$f"; done
awl_outcome 2>/dev/null; echo "reason=$awl_reason"`,
      ).out;
    expect(outcome("started")).toBe("reason=exited\n");
    expect(outcome("started timed_out")).toBe("reason=timed_out\n");
    expect(outcome("started cancelled")).toBe("reason=cancelled\n");
    expect(outcome("cancel")).toBe("finish [] cancelled\n");
    expect(outcome("")).toBe("launch failed\n");
  });

  test("tracking.sh: awl_cg_place moves the wrapper only out of another job's cgroup, never into the one it is in", () => {
    // a write to cgroup.procs costs the kernel a grace period even when the process is already there (the root "/")
    const r = run(
      shell,
      ["tracking.sh"],
      `AWL_JOB_ID=job_X AWL_ATTEMPT=1 m=$PWD/cg
mkdir -p "$m/a/b"
for p in / /a/b /awaitless-job_P.1 /a/b/awaitless-job_P.1; do
  : >"$m/cgroup.procs"; : >"$m/a/b/cgroup.procs"
  awl_cg_place "$m" "$p" || echo "$p refused"
  moved=''; [ ! -s "$m/cgroup.procs" ] || moved=' (moved to /)'; [ ! -s "$m/a/b/cgroup.procs" ] || moved=' (moved to /a/b)'
  echo "$p: \${awl_cgd#"$m"}$moved"
done`,
    );
    expect(r.err).toBe("");
    expect(r.out).toBe(
      "/: /awaitless-job_X.1\n/a/b: /a/b/awaitless-job_X.1\n" +
        "/awaitless-job_P.1: /awaitless-job_X.1 (moved to /)\n/a/b/awaitless-job_P.1: /a/b/awaitless-job_X.1 (moved to /a/b)\n",
    );
  });

  test("tracking.sh: awl_track_prime writes 0 (itself) to its own cgroup's cgroup.procs in the background, only where cgroups will be made", () => {
    const prime = (set: string) =>
      run(
        shell,
        ["tracking.sh"],
        `m=$PWD/cg; mkdir -p "$m/a/b" "$m/mem"; : >"$m/a/b/cgroup.procs"; : >"$m/mem/cgroup.procs"
awl_cg_mounts() { awl_cg2=$m awl_cg1_memory=$m/mem; }
awl_cg_self() { awl_cgp2=/a/b awl_cgp_memory=/; }
${set}
awl_track_prime; wait
echo "v2=[$(cat "$m/a/b/cgroup.procs")] memory=[$(cat "$m/mem/cgroup.procs")]"`,
      );
    expect(prime("")).toMatchObject({ err: "", out: "v2=[0] memory=[]\n" });
    expect(prime("awl_cgp2=''; awl_cg_self() { awl_cgp2='' awl_cgp_memory=/; }")).toMatchObject({
      out: "v2=[] memory=[0]\n",
    });
    expect(prime("AWAITLESS_TRACKING=environment").out).toBe("v2=[] memory=[]\n");
    expect(prime("AWL_SCHEDULER=slurm").out).toBe("v2=[] memory=[]\n");
    expect(prime("awl_cg_self() { awl_cgp2='' awl_cgp_memory=''; }").out).toBe("v2=[] memory=[]\n");
    // the local launcher wrote there as the launch began: nothing to write, and the look-up is kept for the setup
    const launched = prime("awl_launch_primed=1; trap 'echo \"known=$awl_cg_known v2=$awl_cgp2\"' EXIT");
    expect(launched.out).toBe("v2=[] memory=[]\nknown=1 v2=/a/b\n");
  });

  test("prelude.sh: awl_catches tells a process that traps USR1 from one that does not, and from one that is gone", () => {
    const r = run(
      shell,
      ["prelude.sh"],
      `(trap 'exit 0' USR1; : >ready; while [ ! -e stop ]; do sleep 0.05; done) >/dev/null 2>&1 & p1=$!
sleep 30 >/dev/null 2>&1 & p2=$!
n=0; while [ ! -e ready ] && [ "$n" -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
awl_catches "$p1" 10 && echo "trapped: yes" || echo "trapped: no"
awl_catches "$p2" 10 && echo "plain: yes" || echo "plain: no"
kill "$p2"; : >stop; wait
awl_catches "$p2" 10 && echo "gone: yes" || echo "gone: no"`,
    );
    expect(r).toMatchObject({ err: "", out: "trapped: yes\nplain: no\ngone: no\n" });
  });

  test("job-end.sh: awl_end_fields: the exit record's whole-job lines", () => {
    const r = run(
      shell,
      ["job/job-end.sh"],
      `awl_left_n=2 awl_left_action=kept awl_started_cs=100 awl_end_cs=350 awl_trk=cgroup
awl_res_src=cgroup awl_cpu_u=10 awl_cpu_s=20 awl_rss=4096 awl_oom=0
awl_end_fields; printf '%s\\n' "$awl_endf"
unset awl_end_cs awl_trk awl_res_src; awl_left_n='' awl_left_action=''; awl_end_fields; printf '%s\\n' "$awl_endf"`,
    );
    expect(r.out).toBe(
      "\nleftovers=2\nleftovers_action=kept\nran_cs=250\ntracking=cgroup\nresources=cgroup\ncpu_user_us=10\ncpu_system_us=20\nmax_rss_bytes=4096\noom_kills=0\n" +
        "\nleftovers=0\nleftovers_action=stopped\n",
    );
  });
});

test("the fragments the tests source are the wrapper's own files", () => {
  for (const part of JOB_PARTS) {
    expect(statSync(join(import.meta.dir, "../../src/wrapper", part)).isFile()).toBe(true);
  }
});
