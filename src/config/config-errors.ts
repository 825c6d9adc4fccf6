// What a bad config file tells the user: valibot's issues become one plain sentence naming the file, the table,
// the key and what to write instead. Unknown keys are checked here, in one place (a table of the predecessor's
// keys, read by config-legacy.ts, lends its names to the suggestions).
import type * as v from "valibot";
import { AwaitlessError } from "../core/model/errors.ts";
import { nearestName } from "../core/util/nearest-name.ts";

/** The keys each kind of table takes, by table pattern: "" (top level), "defaults", "hosts.NAME". */
export type KnownKeys = Record<"" | "defaults" | "hosts.NAME", readonly string[]>;

/** Old names (Awaitless 0.8's) still read, by table, with the name of ours each stands for: a typo near an old name
 * gets our name as its suggestion. */
export type Aliases = Partial<Record<keyof KnownKeys, Readonly<Record<string, string>>>>;

export function configError(
  path: string,
  issue: v.BaseIssue<unknown>,
  known: KnownKeys,
  aliases: Aliases = {},
): AwaitlessError {
  const keys = (issue.path ?? []).map((item) => String(item.key));
  const unknownKey = issue.type === "strict_object" && issue.expected === "never";
  const { table, key } = placeOf(keys);
  const details = { file: path, key: keys.join(".") || "(top level)", table };
  if (unknownKey) return unknownKeyError(path, table, key, known, aliases, details);
  const where = table === "" ? key : `[${table}] ${key}`;
  const written = issue.input === undefined ? "" : ` = ${tomlValue(issue.input)}`;
  const wanted = expectation(issue);
  const hint =
    wanted === "a table"
      ? `write it as a table: a [${[table, key].filter(Boolean).join(".")}] line followed by its keys`
      : `write ${key} = ${example(issue)} in [${table}], or remove it for the default ` +
        "(docs/configuration.md lists every key)";
  return new AwaitlessError(
    "config_invalid",
    `${path}: ${where}${written} is not valid: it must be ${wanted}`,
    hint,
    details,
  );
}

function unknownKeyError(
  path: string,
  table: string,
  key: string,
  known: KnownKeys,
  aliases: Aliases,
  details: Record<string, unknown>,
): AwaitlessError {
  const pattern: keyof KnownKeys = table === "" ? "" : table.startsWith("hosts.") ? "hosts.NAME" : "defaults";
  const names = known[pattern];
  const old = aliases[pattern] ?? {};
  if (pattern === "") {
    const home = known.defaults.includes(key)
      ? "defaults"
      : known["hosts.NAME"].includes(key)
        ? "hosts.NAME"
        : undefined;
    const near = nearestName(key, names);
    return new AwaitlessError(
      "config_invalid",
      `${path}: there is no top-level key or table ${key}${near ? ` (did you mean [${near}]?)` : ""}`,
      home
        ? `${key} belongs in a [${home}] table: write it under a [${home}] line`
        : "the file has only a [defaults] table and [hosts.NAME] tables; see docs/configuration.md",
      details,
    );
  }
  const nearAny = nearestName(key, [...names, ...Object.keys(old)]);
  const near = nearAny === undefined ? undefined : (old[nearAny] ?? nearAny);
  const hint = near
    ? `rename ${key} to ${near}, or remove it; [${tableName(pattern)}] takes: ${names.join(", ")}`
    : `remove ${key}; [${tableName(pattern)}] takes: ${names.join(", ")}`;
  return new AwaitlessError(
    "config_invalid",
    `${path}: [${table}] has no key ${key}${near ? ` (did you mean \`${near}\`?)` : ""}`,
    hint,
    { ...details, ...(near ? { did_you_mean: near } : {}) },
  );
}

/** Splits an issue path into the TOML table it is in and the key within it. */
function placeOf(keys: string[]): { table: string; key: string } {
  if (keys.length <= 1) return { table: "", key: keys[0] ?? "(top level)" };
  if (keys[0] === "hosts" && keys.length === 2) return { table: "hosts", key: keys[1]! };
  if (keys[0] === "hosts" && keys[2] === "slurm" && keys.length >= 4)
    return { table: `hosts.${keys[1]}.slurm`, key: keys.slice(3).join(".") };
  if (keys[0] === "hosts") return { table: `hosts.${keys[1]}`, key: keys.slice(2).join(".") };
  return { table: keys[0]!, key: keys.slice(1).join(".") };
}

function tableName(pattern: keyof KnownKeys): string {
  return pattern === "hosts.NAME" ? "hosts.NAME" : pattern;
}

type Issue = v.BaseIssue<unknown> & { requirement?: unknown };

function expectation(issue: Issue): string {
  switch (issue.type) {
    case "min_value":
      return `at least ${String(issue.requirement)}`;
    case "max_value":
      return `at most ${String(issue.requirement)}`;
    case "integer":
      return "a whole number";
    case "number":
      return "a number (no quotes)";
    case "string":
      return "a string in double quotes";
    case "boolean":
      return "true or false";
    case "picklist":
      return `one of ${options(issue).join(", ")}`;
    case "record":
    case "object":
    case "strict_object":
      return "a table";
    case "union":
      return "a string or a number";
    case "regex":
      return issue.message;
    default:
      return issue.expected ?? "a valid value";
  }
}

function example(issue: Issue): string {
  switch (issue.type) {
    case "min_value":
    case "max_value":
      return String(issue.requirement);
    case "integer":
    case "number":
      return "10";
    case "string":
      return '"…"';
    case "boolean":
      return "true";
    case "picklist":
      return options(issue)[0] ?? '"…"';
    default:
      return "…";
  }
}

/** A picklist's options as valibot states them: `("local" | "ssh" | "slurm")`. */
function options(issue: Issue): string[] {
  return (issue.expected ?? "")
    .replace(/^\(|\)$/g, "")
    .split(" | ")
    .filter(Boolean);
}

function tomlValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "[…]" : "{…}";
  return String(value);
}
