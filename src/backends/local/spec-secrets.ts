// Reads secret values back from a job's 0600 spec file (the only place they are stored), for redaction.

/** Finds `export 'NAME=value'` words (single-quoted, '\'' escapes) for the given names. */
export function parseSpecSecrets(specText: string, names: string[]): Record<string, string> {
  const wanted = new Set(names);
  const out: Record<string, string> = {};
  const re = /export\s+((?:'[^']*'|\\')+)/g;
  let m: RegExpExecArray | null = re.exec(specText);
  while (m) {
    const word = unquote(m[1]!);
    const eq = word.indexOf("=");
    if (eq > 0) {
      const name = word.slice(0, eq);
      if (wanted.has(name)) out[name] = word.slice(eq + 1);
    }
    m = re.exec(specText);
  }
  return out;
}

function unquote(word: string): string {
  let out = "";
  const re = /'([^']*)'|\\'/g;
  let m: RegExpExecArray | null = re.exec(word);
  while (m) {
    out += m[1] ?? "'";
    m = re.exec(word);
  }
  return out;
}
