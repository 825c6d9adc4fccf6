// list_jobs answers bounded: each row's command and texts cut to a size a listing needs, and the rows that do not
// fit the answer's budget left out, each cut said in the answer with how to get the rest.

/** The most a list_jobs answer carries, its text and its structured rows together (bytes of JSON text). */
export const LIST_ANSWER_BYTES = 256 * 1024;
/** The most of one job's command (its argv's characters together) and of any other text a row carries. */
export const ROW_TEXT_CHARS = 512;

type Row = { job_id: string; argv: string[] };

function cutText(text: string): string {
  return `${text.slice(0, ROW_TEXT_CHARS)}… [${text.length - ROW_TEXT_CHARS} more characters]`;
}

/** `argv` with its first ROW_TEXT_CHARS characters kept (the element that crosses is cut), or undefined if it fits. */
function cutArgv(argv: string[]): string[] | undefined {
  let left = ROW_TEXT_CHARS;
  const kept: string[] = [];
  for (const [i, arg] of argv.entries()) {
    if (arg.length <= left) {
      kept.push(arg);
      left -= arg.length;
      continue;
    }
    kept.push(left > 0 ? `${arg.slice(0, left)}…` : "…");
    const rest = argv.slice(i).reduce((n, a) => n + a.length, 0) - left;
    kept.push(`[${argv.length - i - 1} more arguments, ${rest} more characters]`);
    return kept;
  }
  return undefined;
}

/** One row with its command and long texts cut; `cut_fields` names what was cut. */
export function boundRow<T extends Row>(row: T): T {
  const cut: string[] = [];
  const out: Record<string, unknown> = { ...(row as object) };
  const argv = cutArgv(row.argv);
  if (argv) {
    out.argv = argv;
    cut.push("argv");
  }
  for (const [key, value] of Object.entries(row as object)) {
    if (typeof value === "string" && value.length > ROW_TEXT_CHARS) {
      out[key] = cutText(value);
      cut.push(key);
    }
  }
  if (cut.length > 0) out.cut_fields = cut;
  return out as T;
}

export interface BoundedList<T> {
  rows: T[];
  lines: string[];
  /** Rows (newest first) that did not fit, the oldest of the listing. */
  leftOut: number;
  /** Rows with a field cut. */
  cutRows: number;
}

/**
 * The rows that fit LIST_ANSWER_BYTES, newest first, each bounded (boundRow), with their text lines (`line` is
 * given the bounded row).
 */
export function boundList<T extends Row>(rows: T[], line: (row: T) => string): BoundedList<T> {
  const out: BoundedList<T> = { rows: [], lines: [], leftOut: 0, cutRows: 0 };
  let used = 0;
  for (const [i, row] of rows.entries()) {
    const bounded = boundRow(row);
    const text = line(bounded);
    const size = Buffer.byteLength(JSON.stringify(bounded)) + Buffer.byteLength(text) + 2;
    if (used + size > LIST_ANSWER_BYTES) {
      out.leftOut = rows.length - i;
      break;
    }
    used += size;
    out.rows.push(bounded);
    out.lines.push(text);
    if ("cut_fields" in bounded) out.cutRows++;
  }
  return out;
}

/** What the answer says of what it left out, and how to get it. */
export function leftOutNote(list: BoundedList<Row>): Record<string, unknown> | undefined {
  if (list.leftOut === 0 && list.cutRows === 0) return undefined;
  return {
    ...(list.leftOut > 0 ? { jobs: list.leftOut } : {}),
    ...(list.cutRows > 0 ? { rows_cut: list.cutRows } : {}),
    why: `a list_jobs answer carries at most ${LIST_ANSWER_BYTES / 1024} KiB, and each row at most ${ROW_TEXT_CHARS} characters of its command and of any text (its cut_fields say which were cut)`,
    next: "get_job_status JOB_ID shows one job whole; narrow the list with state, host, queue or name, or ask for fewer rows with limit",
  };
}

/** A filter value as the "No jobs match" sentence quotes it. */
export function quotedFilter(value: unknown): string {
  const text = String(value);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
