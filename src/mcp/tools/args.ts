// Tool arguments: the value schemas tools share, and the one check of a call's arguments (text, unknown names, types).
import * as v from "valibot";
import { nearestName } from "../../core/util/nearest-name.ts";
import { NOT_TEXT } from "../../core/util/utf8-text.ts";
import { illFormedArgument } from "../text-args.ts";

export const seconds = (what: string) =>
  v.pipe(v.number(`${what} must be a number of seconds`), v.minValue(0, `${what} must be ≥ 0`));
export const count = (what: string, max: number) =>
  v.pipe(
    v.number(`${what} must be an integer`),
    v.integer(`${what} must be an integer`),
    v.minValue(1, `${what} must be ≥ 1`),
    v.maxValue(max, `${what} must be ≤ ${max}`),
  );
export const jobId = v.pipe(
  v.string("job_id must be a string such as job_01J…"),
  v.minLength(1, "job_id must not be empty"),
  v.description("The job_… ID."),
);
export const stringMap = (what: string) => v.record(v.string(), v.string(`${what} values must be strings`));

/** The schema a tool validates and advertises: its entries, with any other argument refused (not dropped). */
export function strictInput<E extends v.ObjectEntries>(schema: v.ObjectSchema<E, undefined>) {
  return v.strictObject(schema.entries);
}

export interface ArgsProblem {
  message: string;
  hint: string;
  details: Record<string, unknown>;
}

/** Validate tool arguments; an unknown argument is named with the nearest known one, other issues by argument. */
export function parseArgs<S extends v.GenericSchema>(
  schema: S,
  args: unknown,
): { ok: true; value: v.InferOutput<S> } | ({ ok: false } & ArgsProblem) {
  const notText = illFormedArgument(args);
  if (notText !== undefined)
    return {
      ok: false,
      message: `${notText} ${NOT_TEXT}; nothing was run or changed`,
      hint: 'Send the text as valid UTF-8; for bytes that are not text, have the command make them, e.g. printf inside ["sh","-c",…].',
      details: { argument: notText },
    };
  const result = v.safeParse(schema, args ?? {});
  if (result.success) return { ok: true, value: result.output };
  // Every unknown argument is named (valibot's strict object reports only the first one).
  const known = Object.keys((schema as unknown as { entries?: v.ObjectEntries }).entries ?? {});
  const given = typeof args === "object" && args !== null && !Array.isArray(args) ? Object.keys(args) : [];
  const unknown = given.filter((key) => !known.includes(key));
  if (unknown.length > 0) return unknownArguments(unknown, known);
  const message = result.issues
    .slice(0, 3)
    .map((issue) => {
      const path = v.getDotPath(issue);
      if (path && issue.input === undefined && issue.message.startsWith("Invalid key"))
        return `${path} is required`;
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
  return {
    ok: false,
    message,
    hint: "Fix the named argument and call again; tools/list shows each tool's input schema.",
    details: {},
  };
}

function unknownArguments(names: string[], known: string[]): { ok: false } & ArgsProblem {
  const near = names.map((name) => nearestName(name, known));
  const listed = names.map((name, i) => `\`${name}\`${near[i] ? ` (did you mean \`${near[i]}\`?)` : ""}`);
  const renames = names.flatMap((name, i) => (near[i] ? [`${name} → ${near[i]}`] : []));
  const removals = names.filter((_, i) => near[i] === undefined);
  const fix = [
    ...(renames.length > 0 ? [`Rename ${renames.join(", ")}`] : []),
    ...(removals.length > 0 ? [`${renames.length > 0 ? "remove" : "Remove"} ${removals.join(", ")}`] : []),
  ].join(", ");
  return {
    ok: false,
    message: `unknown argument${names.length > 1 ? "s" : ""} ${listed.join(", ")}: nothing was run or changed`,
    hint: `${fix} and call again; this tool takes only: ${known.join(", ")}.`,
    details: {
      unknown_arguments: names,
      did_you_mean: Object.fromEntries(names.map((n, i) => [n, near[i] ?? null])),
    },
  };
}
