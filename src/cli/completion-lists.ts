// `awaitless completion --list jobs|hosts|queues`: the dynamic words the completion scripts ask the binary for.
import { homedir } from "node:os";
import type { Ctx } from "../context.ts";
import { EXIT, invalid } from "../core/model/errors.ts";
import { didYouMean } from "../core/util/nearest-name.ts";
import { sshHostAliases } from "../ssh/ssh-config-aliases.ts";
import type { CliIo } from "./cli-io.ts";

export const LISTS = ["jobs", "hosts", "queues"] as const;

/** Reads only the store and config files: completion never reconciles a job or contacts a host. */
export async function completionList(
  what: string,
  io: CliIo,
  makeCtx: () => Promise<Ctx>,
  json = false,
): Promise<number> {
  if (!(LISTS as readonly string[]).includes(what))
    throw invalid(
      `--list ${what}: nothing to list by that name${didYouMean(what, LISTS)}`,
      `use --list ${LISTS.join(", --list ")}`,
    );
  const ctx = await makeCtx();
  let words: string[];
  if (what === "jobs") words = ctx.store.recentJobIds(200);
  else if (what === "queues") words = ctx.store.queueNames();
  else words = [...Object.keys(ctx.config.hosts), ...sshHostAliases(io.env.HOME || homedir())];
  const unique = [...new Set(words)];
  if (json) io.stdout.write(`${JSON.stringify({ list: what, words: unique })}\n`);
  else io.stdout.write(unique.length ? `${unique.join("\n")}\n` : "");
  return EXIT.ok;
}
