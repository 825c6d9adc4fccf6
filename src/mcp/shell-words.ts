// A small POSIX-sh reader for the guards: a script's simple commands as words, and whether each sits inside
// a compound (loop, if, case). Not a full parser: what it cannot read, it gives up on (the guards then allow).

export interface ShellCommand {
  words: string[];
  /** Inside while/until/for/if/case (its condition or body): a sleep there is a poll interval, not a bare wait. */
  inCompound: boolean;
}

const OPENERS = new Set(["while", "until", "for", "if", "case", "select"]);
const CLOSERS = new Set(["done", "fi", "esac"]);
const CONTINUERS = new Set(["do", "then", "else", "elif", "{", "}", "!", "time"]);
const REDIRECT = /^\d*(?:[<>]{1,2}|<>|>\||[<>]&)/;

/** The script's simple commands in order, or undefined when its quoting does not close. */
export function shellCommands(script: string): ShellCommand[] | undefined {
  const out: ShellCommand[] = [];
  let words: string[] = [];
  let word = "";
  let inWord = false;
  let depth = 0;
  let inCase = false;
  const endWord = () => {
    if (inWord) words.push(word);
    word = "";
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    let w = words;
    words = [];
    let skipRest = false;
    while (w.length > 0) {
      const head = w[0]!;
      if (OPENERS.has(head)) {
        depth++;
        if (head === "case") inCase = true;
        // `for x in a b` and `case $x in` are not commands.
        if (head === "for" || head === "select" || head === "case") skipRest = true;
      } else if (CLOSERS.has(head)) {
        depth = Math.max(0, depth - 1);
        if (head === "esac") inCase = false;
      } else if (!CONTINUERS.has(head)) break;
      w = w.slice(1);
    }
    if (skipRest) return;
    const kept: string[] = [];
    for (let i = 0; i < w.length; i++) {
      const m = REDIRECT.exec(w[i]!);
      if (m) {
        if (m[0] === w[i]) i++; // `> file`: the target is the next word
        continue;
      }
      kept.push(w[i]!);
    }
    if (kept.length > 0) out.push({ words: kept, inCompound: depth > 0 || inCase });
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (c === "'") {
      const end = script.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word += script.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < script.length && script[j] !== '"'; j++) {
        if (script[j] === "\\" && j + 1 < script.length) j++;
        word += script[j];
      }
      if (j >= script.length) return undefined;
      inWord = true;
      i = j;
    } else if (c === "\\") {
      if (script[i + 1] !== "\n") {
        word += script[i + 1] ?? "";
        inWord = true;
      }
      i++;
    } else if (c === "`" || (c === "$" && script[i + 1] === "(")) {
      const end = c === "`" ? script.indexOf("`", i + 1) : closingParen(script, i + 1);
      if (end < 0) return undefined;
      word += script.slice(i, end + 1);
      inWord = true;
      i = end;
    } else if (c === "#" && !inWord) {
      const end = script.indexOf("\n", i);
      i = end < 0 ? script.length : end - 1;
    } else if (c === " " || c === "\t") {
      endWord();
    } else if (c === ">" || c === "<") {
      word += c;
      inWord = true;
      if (script[i + 1] === "&" || script[i + 1] === c || script[i + 1] === "|") word += script[++i];
    } else if (";&|\n()".includes(c)) {
      endCommand();
      if ((c === "&" || c === "|" || c === ";") && script[i + 1] === c) i++;
    } else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return out;
}

/** Index of the `)` closing the `(` at `open`, or -1. */
function closingParen(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    if (s[i] === "(") depth++;
    else if (s[i] === ")" && --depth === 0) return i;
  }
  return -1;
}
