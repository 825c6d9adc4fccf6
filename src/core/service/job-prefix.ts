// Job-ID prefixes on the CLI (as git takes commit prefixes): a unique prefix names its job, an ambiguous
// or too short one is refused with the candidates. MCP takes full IDs only and never comes here.
import { AwaitlessError, hint, invalid } from "../model/errors.ts";
import { isJobId } from "../model/ids.ts";
import type { JobStore } from "../store/job-store.ts";

/** Characters after `job_` a prefix needs: fewer would match every job of the last few weeks. */
export const MIN_PREFIX_CHARS = 6;
const PREFIX_RE = /^job_[0-9A-Za-z]+$/;
const SHOWN = 5;

/**
 * A full job ID, or anything that is not shaped like a prefix, is returned unchanged (the caller's own
 * lookup then says "no job" or "not a job ID"); a prefix is replaced by the one job ID it starts.
 */
export function resolveJobIdPrefix(store: JobStore, text: string): string {
  if (isJobId(text) || !PREFIX_RE.test(text) || store.get(text)) return text;
  const chars = text.length - "job_".length;
  if (chars < MIN_PREFIX_CHARS) {
    throw invalid(
      `job ID prefix ${text} is too short (${chars} of at least ${MIN_PREFIX_CHARS} characters after job_)`,
      hint("job_id_prefix_longer"),
    );
  }
  const ids = store.jobIdsWithPrefix(text, SHOWN + 1);
  if (ids.length === 1) return ids[0]!;
  if (ids.length === 0) {
    throw new AwaitlessError("not_found", `no job ID starts with ${text}`, hint("find_job_id_prefix"));
  }
  const more = ids.length > SHOWN ? ", …" : "";
  throw invalid(
    `job ID prefix ${text} is ambiguous: ${ids.slice(0, SHOWN).join(", ")}${more}`,
    hint("job_id_prefix_ambiguous"),
  );
}
