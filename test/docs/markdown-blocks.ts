// The fenced blocks of a markdown file, each with its language, line and `<!-- example: … -->` marker.

export const SHELL_LANGS = new Set(["sh", "bash", "shell", "console"]);

export interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  body: string;
  /** The reason of an `<!-- example: skip (REASON) -->` right before the fence (blank lines allowed). */
  skip?: string;
  /** A marker that could not be read, or stands before a block that is not a shell example. */
  problem?: string;
}

const MARKER = /^<!--\s*example:(.*?)-->$/;
const SKIP = /^\s*skip\s*\((.+)\)\s*$/;

export function fencedBlocks(file: string, text: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[2]!;
    const lang = open[3]!.toLowerCase();
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.trim().startsWith(fence); i++) body.push(lines[i]!);
    const block: Block = { file, line: start + 1, lang, body: body.join("\n") };
    readMarker(block, lines, start);
    blocks.push(block);
  }
  return blocks;
}

function readMarker(block: Block, lines: string[], fenceIndex: number): void {
  let j = fenceIndex - 1;
  while (j >= 0 && lines[j]!.trim() === "") j--;
  const m = j >= 0 ? MARKER.exec(lines[j]!.trim()) : null;
  if (!m) return;
  const skip = SKIP.exec(m[1]!);
  if (!skip) block.problem = `unreadable marker "${lines[j]!.trim()}": write <!-- example: skip (REASON) -->`;
  else if (!SHELL_LANGS.has(block.lang))
    block.problem = `a skip marker before a \`${block.lang || "untagged"}\` block`;
  else block.skip = skip[1]!.trim();
}

/** The commands of a block: a `console` block's `$ ` lines (the rest is output), any other block whole. */
export function commandsOf(block: Block): string {
  if (block.lang !== "console") return block.body;
  return block.body
    .split("\n")
    .filter((l) => l.startsWith("$ "))
    .map((l) => l.slice(2))
    .join("\n");
}
