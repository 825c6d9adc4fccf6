// How to run this same program again as a child: the compiled binary alone, or bun + the entry script.

export function selfArgv(): string[] {
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:/~BUN/");
  return compiled ? [process.execPath] : [process.execPath, Bun.main];
}
