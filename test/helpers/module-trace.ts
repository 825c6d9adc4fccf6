// Preload (`bun --preload`) that appends the path of every src/ module the process evaluates to $AWL_MODULE_TRACE.
// Run from source, a module is evaluated exactly when the compiled binary evaluates it: static imports at start,
// `import()` and `require()` when reached (the bundle keeps those lazy).
import { appendFileSync, readFileSync } from "node:fs";
import { plugin } from "bun";

const out = process.env.AWL_MODULE_TRACE;
if (out) {
  plugin({
    name: "awaitless-module-trace",
    setup(build) {
      build.onLoad({ filter: /\/src\/.*\.ts$/ }, (args) => {
        appendFileSync(out, `${args.path}\n`);
        return { contents: readFileSync(args.path, "utf8"), loader: "ts" };
      });
    },
  });
}
