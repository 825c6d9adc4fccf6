// cac reads options through mri, which turns every value that looks like a number into one: `--name 007` → 7,
// `--array ''` → 0, `--array 0x3` → 3. This puts back the text as typed wherever that turned it into another.
interface OptionLike {
  names: string[];
  isBoolean?: boolean;
}

type Parsed = { args: unknown[]; options: Record<string, unknown> };

/** Makes the CLI's parser keep each option value as typed where mri's number reading would change it. */
export function keepTypedValues(cli: { globalCommand: { options: unknown[] } }): void {
  // mri is private in cac's types; it is the one place that sees both argv and the options parsed from it
  const inner = cli as unknown as { mri(argv: string[], command?: { options: OptionLike[] }): Parsed };
  const parse = inner.mri.bind(cli);
  inner.mri = (argv, command) => {
    const parsed = parse(argv, command);
    const options = [...(cli.globalCommand.options as OptionLike[]), ...(command?.options ?? [])];
    restore(parsed.options, typedValues(argv, options));
    return parsed;
  };
}

/** The values each value-taking option was given, as typed, in order (up to `--`). */
function typedValues(argv: string[], options: OptionLike[]): Map<string, string[]> {
  const takesValue = new Map<string, string>();
  for (const o of options) if (!o.isBoolean) for (const n of o.names) takesValue.set(n, o.names.at(-1)!);
  const out = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") break;
    if (!word.startsWith("--")) continue;
    const eq = word.indexOf("=");
    const flag = (eq < 0 ? word.slice(2) : word.slice(2, eq)).replace(/-([a-z])/g, (_, c: string) =>
      c.toUpperCase(),
    );
    const name = takesValue.get(flag);
    if (name === undefined) continue;
    let value: string | undefined;
    if (eq >= 0 && eq < word.length - 1) value = word.slice(eq + 1);
    // as mri reads it: the next word, unless it starts with "-"
    else if (i + 1 < argv.length && !argv[i + 1]!.startsWith("-")) value = argv[++i];
    if (value !== undefined) out.set(name, [...(out.get(name) ?? []), value]);
  }
  return out;
}

function restore(options: Record<string, unknown>, typed: Map<string, string[]>): void {
  for (const [name, texts] of typed) {
    const got = options[name];
    const back = (v: unknown, text: string | undefined) =>
      typeof v === "number" && text !== undefined && String(v) !== text ? text : v;
    if (Array.isArray(got)) options[name] = got.map((v, i) => back(v, texts[i]));
    else if (texts.length === 1) options[name] = back(got, texts[0]);
  }
}
