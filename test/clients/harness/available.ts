// Whether a real client can be driven here; when not, the reason and how to enable it.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../../helpers/cli.ts";
import type { Availability } from "../../helpers/sshd.ts";
import { CLIENT_BIN } from "./run-client.ts";

const ENABLE =
  "to enable: `npm install --prefix test/clients --no-save` and run the tests as root (each client runs in `unshare -n`)";

export function clientAvailable(bin: string): Availability {
  if (process.platform !== "linux") return { ok: false, why: `the client harness needs Linux; ${ENABLE}` };
  if (!existsSync(BINARY)) return { ok: false, why: `${BINARY} is missing: run \`bun run build\` first` };
  if (!existsSync(join(CLIENT_BIN, bin)))
    return { ok: false, why: `test/clients/node_modules/.bin/${bin} is not installed; ${ENABLE}` };
  if (process.getuid?.() !== 0) return { ok: false, why: `not running as root; ${ENABLE}` };
  if (Bun.which("unshare") === null || Bun.which("ip") === null)
    return { ok: false, why: `unshare (util-linux) or ip (iproute2) is missing; ${ENABLE}` };
  return { ok: true, why: "" };
}
