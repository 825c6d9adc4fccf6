// Declared artifacts of a remote job: globbed, resolved, sized, dated and hashed on the host; small JSON read back.
import type { ArtifactEntry } from "../../core/job.ts";
import { ARTIFACTS, READ_FILE } from "./remote-scripts.ts";
import type { SshHost } from "./ssh-host.ts";

/** Parses the ARTIFACTS report into entries (without JSON content), one group per declared pattern. */
export function parseArtifactReport(text: string, declared: readonly string[]): ArtifactEntry[] {
  const lines = text.split("\n").filter((l) => l !== "");
  const fatal = lines.find((l) => l.startsWith("E\t"));
  if (fatal) {
    return declared.map((d) => ({
      path: d,
      declared_path: d,
      exists: false,
      remote: true,
      reason: fatal.slice(2),
    }));
  }
  const groups: ArtifactEntry[][] = [];
  for (const line of lines) {
    const f = line.split("\t");
    if (f[0] === "P") groups.push([]);
    const group = groups[groups.length - 1];
    const d = declared[groups.length - 1];
    if (!group || d === undefined) continue;
    if (f[0] === "F" && f.length >= 5) {
      const [, size, mtime, sha, ...path] = f;
      const entry: ArtifactEntry = {
        path: path.join("\t"),
        declared_path: d,
        exists: true,
        remote: true,
        size_bytes: Number(size),
      };
      if (sha && /^[0-9a-f]{64}$/.test(sha)) entry.sha256 = sha;
      if (mtime && /^\d+$/.test(mtime)) entry.modified_at = new Date(Number(mtime) * 1000).toISOString();
      group.push(entry);
    } else if (f[0] === "O") {
      group.push({
        path: f.slice(1).join("\t"),
        declared_path: d,
        exists: false,
        remote: true,
        reason: "resolves outside the job's working directory (through .. or a symlink); not read",
      });
    }
  }
  return declared.flatMap((d, i) => {
    const g = groups[i] ?? [];
    return g.length > 0 ? g : [{ path: d, declared_path: d, exists: false, remote: true }];
  });
}

export async function collectRemoteArtifacts(
  host: SshHost,
  cwd: string,
  declared: readonly string[],
  maxInlineBytes: number,
): Promise<ArtifactEntry[]> {
  if (declared.length === 0) return [];
  const r = await host.run(ARTIFACTS, [cwd, ...declared]);
  const entries = parseArtifactReport(r.stdout.toString(), declared);
  for (const e of entries) {
    if (!e.exists || !e.path.endsWith(".json") || (e.size_bytes ?? 0) > maxInlineBytes) continue;
    const c = await host.run(READ_FILE, [e.path, String(maxInlineBytes)]);
    if (c.code !== 0 || c.stdout.length > maxInlineBytes) continue;
    try {
      e.content = JSON.parse(c.stdout.toString("utf8"));
    } catch (err) {
      e.parse_error = (err as Error).message;
    }
  }
  return entries;
}
