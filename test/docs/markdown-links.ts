// The links and heading anchors of a markdown file, read as GitHub renders them (outside code).

/** One link of a file: its target as written, and where it is. */
export interface Link {
  file: string;
  line: number;
  target: string;
}

/**
 * GitHub's heading anchor (its `github-slugger`): lower case; every character that is not a letter, a mark, a
 * decimal or letter number, a connector (`_`), a hyphen or a space is dropped; spaces become hyphens.
 */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** A heading's text as GitHub shows it: code spans, links, emphasis and HTML tags reduced to their text. */
export function headingText(raw: string): string {
  return raw
    .replace(/<[^>]*>/g, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`+([^`]*)`+/g, "$1")
    .replace(/(\*\*|__|\*)/g, "")
    .trim();
}

/** Every line of a file with its 1-based number, and whether it is inside a fenced code block (fences excluded). */
export function markdownLines(text: string): { line: number; text: string; fenced: boolean }[] {
  const out: { line: number; text: string; fenced: boolean }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((l, i) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(l);
    if (fence) {
      if (open && l.trim().startsWith(fence)) fence = null;
      else out.push({ line: i + 1, text: l, fenced: true });
      return;
    }
    if (open) {
      fence = open[1]!;
      return;
    }
    out.push({ line: i + 1, text: l, fenced: false });
  });
  return out;
}

/** The lines of a file outside fenced code blocks, each with its 1-based number. */
function proseLines(text: string): { line: number; text: string }[] {
  return markdownLines(text).filter((l) => !l.fenced);
}

/** Every anchor a file offers: its headings' slugs, a repeated one suffixed `-1`, `-2`, … as GitHub does. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text: l } of proseLines(text)) {
    const h = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(l);
    if (!h) continue;
    const base = slug(headingText(h[1]!));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Inline links and images `[text](target)` and reference definitions `[x]: target`, outside code. */
export function linksOf(file: string, text: string): Link[] {
  const links: Link[] = [];
  for (const { line, text: l } of proseLines(text)) {
    const prose = l.replace(/`[^`]*`/g, (m) => " ".repeat(m.length));
    for (const m of prose.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ file, line, target: m[1]! });
    const def = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
    if (def) links.push({ file, line, target: def[1]! });
  }
  return links;
}

/** A link to another site or protocol (not a file of this repository). */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}
