// What the service's lifecycle modules (launch, submit, refresh, wait, cancel) get of it beyond ServiceCore: this
// process's memory (unreachable hosts, full-disk notices), the retry and `final` record hooks, the --after glue; and the
// store write that a full disk turns into a notice.
import { dirname } from "node:path";
import type { JobDependencies } from "../dependencies/dependency-actions.ts";
import type { FinalDeps } from "../dependencies/retried-parents.ts";
import type { RetryDeps } from "../retries/retry-attempt.ts";
import type { StoredJob } from "../store/job-store.ts";
import { describeFree, isNoSpace } from "../util/no-space.ts";
import type { ServiceCore } from "./service-context.ts";
import { storeNotice } from "./unsealed.ts";

export interface LifecycleDeps extends ServiceCore {
  /** Hosts found unreachable by this process's last look at each job. */
  readonly unreachable: Map<string, string>;
  /** Full-disk warnings not yet said (JobService.storeNotices). */
  readonly notices: Set<string>;
  /** Retried jobs whose `final` record this process wrote (dependencies/retried-parents.ts). */
  readonly final: FinalDeps;
  readonly retries: RetryDeps;
  readonly dependencies: JobDependencies;
}

/** Says (once, by storeNotices) that a store write found no space. */
export function noteNoSpace(life: Pick<LifecycleDeps, "store" | "notices">): void {
  life.notices.add(storeNotice(life.store.path, `no space left: ${describeFree(dirname(life.store.path))}`));
}

/** A store write; on a full disk, says why (storeNotices) and reports `observed` instead, stored later. */
export function recorded(
  life: Pick<LifecycleDeps, "store" | "notices">,
  write: () => StoredJob,
  observed: () => StoredJob,
): StoredJob {
  try {
    return write();
  } catch (e) {
    if (!isNoSpace(e)) throw e;
    noteNoSpace(life);
    return observed();
  }
}
