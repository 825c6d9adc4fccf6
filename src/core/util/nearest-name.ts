// "Did you mean …?": the known name nearest to a misspelt one (edit distance), for MCP arguments and config keys.

/** Levenshtein distance with adjacent transpositions counted as one edit (`cwdd`→`cwd` 1, `tiemout`→`timeout` 1). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name closest to `given`, or undefined when none is close enough to be a plausible typo:
 * at most a third of the longer name's characters may differ (at least 1, at most 3 edits), compared
 * case-insensitively with `-` read as `_`. A known name that contains `given` as a whole word part
 * (`timeout` → `timeout_seconds`) also counts.
 */
export function nearestName(given: string, known: Iterable<string>): string | undefined {
  const norm = (s: string) => s.toLowerCase().replaceAll("-", "_");
  const g = norm(given);
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const n = norm(name);
    // lengths more than 3 apart are more than 3 edits apart: a megabyte of a name costs no edit distance
    const distance =
      n.split("_").includes(g) || n.startsWith(`${g}_`)
        ? 1
        : Math.abs(g.length - n.length) > 3
          ? Number.POSITIVE_INFINITY
          : editDistance(g, n);
    const allowed = Math.min(3, Math.max(1, Math.floor(Math.max(g.length, n.length) / 3)));
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** ` (did you mean \`cwd\`?)`, or "" when no known name is near. */
export function didYouMean(given: string, known: Iterable<string>): string {
  const near = nearestName(given, known);
  // a word that is known already is misplaced, not misspelt: suggesting it again helps no one
  return near === undefined || near === given ? "" : ` (did you mean \`${near}\`?)`;
}
