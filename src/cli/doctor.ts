// `awaitless doctor`: checks what the local backend needs and says how to fix each failure.

import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, rmSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configPath } from "../config/config.ts";
import type { Ctx } from "../context.ts";
import { EXIT } from "../core/model/errors.ts";
import {
  CHECK_MAX_SECONDS,
  HEARTBEAT_SECONDS,
  LOCAL_HEARTBEAT_SECONDS,
  lostAfterSeconds,
} from "../core/model/liveness.ts";
import { directoryBytes } from "../core/util/directory-bytes.ts";
import type { CliIo } from "./cli-io.ts";
import { ago, humanBytes, humanDuration, paint, styleFor } from "./render.ts";
import { shown } from "./terminal-safe.ts";

interface Check {
  check: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

function which(cmd: string): string | null {
  const r = spawnSync("/bin/sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

async function inotifyWorks(dir: string): Promise<boolean> {
  const probe = mkdtempSync(join(dir, ".doctor-"));
  try {
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        w.close();
        resolve(false);
      }, 1000);
      const w = watch(probe, () => {
        clearTimeout(timer);
        w.close();
        resolve(true);
      });
      writeFileSync(join(probe, "x"), "x");
    });
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** The store against its quota, and when the automatic gc last started. */
function housekeeping(ctx: Ctx): Check {
  const d = ctx.config.defaults;
  const store = ctx.store;
  const bytes = store.jobDirs().reduce((sum, j) => sum + directoryBytes(j.job_dir), 0);
  const size =
    d.store_quota_bytes > 0
      ? `job files take ${humanBytes(bytes)} of the ${humanBytes(d.store_quota_bytes)} quota`
      : `job files take ${humanBytes(bytes)} (no quota)`;
  const last = store.meta("auto_gc_at");
  const every = `automatic gc every ${d.auto_gc_interval_hours} h`;
  let auto = `${every}; the clock starts at the next launch`;
  if (!(d.auto_gc_interval_hours > 0)) auto = "automatic gc is off (auto_gc_interval_hours = 0)";
  else if (last) {
    const dueIn = (Date.parse(last) + d.auto_gc_interval_hours * 3_600_000 - Date.now()) / 1000;
    const next = dueIn > 0 ? `next due in ${humanDuration(dueIn)}` : "due at the next launch";
    auto = store.meta("auto_gc_pid") ? `${every}, last started ${ago(last)}; ${next}` : `${every}; ${next}`;
  }
  const over = d.store_quota_bytes > 0 && bytes > d.store_quota_bytes;
  return {
    check: "housekeeping",
    ok: !over,
    detail: `${size}; ${auto}`,
    ...(over
      ? {
          fix: "run `awaitless gc` now; if active jobs alone are over, raise store_quota_bytes or lower log_cap_bytes",
        }
      : {}),
  };
}

/** `--host NAME`, else every configured host that uses SSH or Slurm. */
function hostsToCheck(host: unknown, ctx: Ctx | null): string[] {
  if (typeof host === "string" && host) return [host];
  return Object.entries(ctx?.config.hosts ?? {})
    .filter(([, h]) => h.backend === "ssh" || h.backend === "slurm" || h.hostname !== undefined)
    .map(([name]) => name);
}

export async function doctor(
  opts: { json?: boolean; host?: unknown; config?: unknown },
  io: CliIo,
  makeCtx: () => Promise<Ctx>,
): Promise<number> {
  const checks: Check[] = [];
  const { path } = configPath(io.env, typeof opts.config === "string" ? opts.config : undefined);
  // One load (the config, then the store it names): each failure is one row, never repeated by the next.
  let ctx: Ctx | null = null;
  let configBroken = false;
  try {
    ctx = await makeCtx();
    const cfg = ctx.config;
    const legacy = cfg.legacyNotes.length > 0 ? " (with Awaitless 0.8 settings: see the note above)" : "";
    checks.push({
      check: "config",
      ok: true,
      detail: cfg.path ? `${cfg.path} is valid${legacy}` : `none at ${path} (all defaults)`,
    });
    const n = ctx.store.countJobs();
    checks.push({ check: "store", ok: true, detail: `${ctx.store.path} (${n} jobs, WAL)` });
  } catch (e) {
    configBroken = (e as { code?: string }).code === "config_invalid";
    if (!configBroken) {
      const detail = existsSync(path) ? `${path} is valid` : `none at ${path} (all defaults)`;
      checks.push({ check: "config", ok: true, detail });
    }
    checks.push({
      check: configBroken ? "config" : "store",
      ok: false,
      detail: (e as Error).message,
      fix: (e as { hint?: string }).hint ?? "",
    });
  }
  if (ctx) {
    const dir = ctx.config.dataDir;
    try {
      accessSync(dir, constants.W_OK);
      checks.push({ check: "data dir", ok: true, detail: `${dir} is writable` });
    } catch {
      checks.push({
        check: "data dir",
        ok: false,
        detail: `${dir} is not writable`,
        fix: "set AWAITLESS_DATA_DIR to a writable directory",
      });
    }
    checks.push(housekeeping(ctx));
    const events = await inotifyWorks(dir);
    checks.push({
      check: "file events",
      ok: true,
      detail: events
        ? "inotify works: waits return as soon as a job exits"
        : "no file-system events: waits fall back to polling",
    });
  }
  const shell = io.env.AWAITLESS_SHELL || "/bin/sh";
  checks.push(
    existsSync(shell)
      ? { check: "shell", ok: true, detail: `${shell} runs the job wrapper` }
      : {
          check: "shell",
          ok: false,
          detail: `${shell} is missing`,
          fix: "install a POSIX sh or set AWAITLESS_SHELL",
        },
  );
  const setsid = which("setsid");
  checks.push({
    check: "setsid",
    ok: true,
    detail: setsid
      ? `${setsid}: each job gets its own session and process group`
      : "missing: the wrapper uses job control (set -m) instead",
  });
  const { localTrackingCheck } = await import("../backends/local/tracking-doctor.ts");
  checks.push(localTrackingCheck(existsSync(shell) ? shell : "/bin/sh", io.env));
  checks.push({
    check: "liveness",
    ok: true,
    detail: `a job's wrapper checks its output every 1–${CHECK_MAX_SECONDS}s (less often while quiet) and heartbeats every ${HEARTBEAT_SECONDS}s while quiet (${LOCAL_HEARTBEAT_SECONDS}s on this machine, where the wrapper's process is checked directly); a job whose wrapper cannot be checked directly (Slurm) is lost after ${lostAfterSeconds()}s without a heartbeat`,
  });
  const { localBootCheck } = await import("../backends/local/boot-doctor.ts");
  checks.push(localBootCheck());
  const hosts = ctx?.config.hosts ?? {};
  const { sshDoctorChecks, isReachCheck } = await import("../backends/ssh/doctor.ts");
  for (const name of hostsToCheck(opts.host, ctx)) {
    if (configBroken) {
      checks.push({ check: `${name}: resolution`, ok: false, detail: "not checked: fix the config first" });
      continue;
    }
    const slurm = await import("../backends/slurm/doctor.ts");
    const slurmHost = ctx !== null && slurm.isSlurmHost(name, hosts, ctx.config.defaults);
    if (ctx && slurmHost) {
      const store = ctx.store;
      checks.push(
        slurm.slurmPacingCheck(name, hosts, ctx.config.defaults, (k) =>
          store.schedulerWatchers(k, Date.now()),
        ),
        slurm.slurmCompletionCheck(name, hosts),
        slurm.slurmTrackingCheck(name),
      );
    }
    // a Slurm cluster whose login node is this machine is not reached over SSH: check its clients here
    if (slurm.isLocalSlurmHost(name, hosts)) {
      checks.push(...(await slurm.slurmLocalDoctorChecks(name)));
      continue;
    }
    for (const c of await sshDoctorChecks(name, hosts, { probeTracking: !slurmHost })) {
      checks.push(c); // each SSH check already names its host
    }
  }
  const failing = checks.filter((c) => !c.ok);
  const failed = failing.length;
  if (opts.json) {
    io.stdout.write(JSON.stringify({ ok: failed === 0, checks }) + "\n");
  } else {
    const style = styleFor(io.stdout, io.env);
    for (const c of checks) {
      const mark = c.ok ? paint(style, "green", "ok  ") : paint(style, "red", "FAIL");
      const width = Math.max(12, ...checks.map((x) => x.check.length));
      io.stdout.write(`${mark} ${shown(c.check.padEnd(width))} ${shown(c.detail)}\n`);
      if (c.fix) io.stdout.write(`     ${"".padEnd(width)} fix: ${shown(c.fix)}\n`);
    }
  }
  // 2: something to fix here (config, store, this machine, a host name that does not resolve); 7: only hosts
  // that resolve but cannot be reached or used failed. The same codes a command exits with on those problems.
  if (failed === 0) return EXIT.ok;
  return failing.every((c) => isReachCheck(c.check)) ? EXIT.connection : EXIT.usage;
}
