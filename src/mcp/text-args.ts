// Tool arguments that are not text: the first string or key holding bytes that were not UTF-8 (request-check.ts
// keeps them as lone surrogates) or a lone UTF-16 surrogate, named by its place in the arguments.

/** How a key is shown in a path: as it is when it is a plain name, else quoted; long ones cut. */
function segment(key: string): string {
  const shown = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : JSON.stringify(key);
  return shown.length > 100 ? `${shown.slice(0, 100)}…` : shown;
}

/**
 * Where in `args` the first text that is not well-formed is: `name`, `artifacts[2]`, `env.LANG`, or `a key of env`
 * for a key; undefined when all is text. Walks without recursion (arguments nest as deep as a 10 MiB line allows).
 */
export function illFormedArgument(args: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value: args, path: "" }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === "string") {
      if (!value.isWellFormed()) return path || "the arguments";
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]` });
      continue;
    }
    const entries = Object.entries(value);
    for (const [key] of entries)
      if (!key.isWellFormed()) return path ? `a key of ${path}` : "an argument's name";
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, v] = entries[i]!;
      stack.push({ value: v, path: path ? `${path}.${segment(key)}` : segment(key) });
    }
  }
  return undefined;
}
