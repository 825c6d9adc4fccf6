// Many generated hostile 0.8 stores through `awaitless import` (the fuzz test runs a few): each one imported, read
// (list, inspect, logs, status) and collected (gc), and nothing outside the data directory may change.
// Usage: bun bench/import-fuzz.ts [--stores N] [--seed S]   (default 200 stores, a random seed; builds nothing)
import { Sandbox } from "../test/helpers/cli.ts";
import { fuzzOne } from "../test/helpers/import-fuzz.ts";

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
};
const stores = arg("--stores") ?? 200;
const seed = arg("--seed") ?? Math.floor(Math.random() * 2 ** 31);
const started = Date.now();
let failed = 0;
for (let i = 0; i < stores; i++) {
  const sb = new Sandbox();
  try {
    const problems = fuzzOne(sb, seed + i);
    if (problems.length > 0) {
      failed++;
      console.log(`seed ${seed + i}:\n  ${problems.join("\n  ")}`);
    }
  } finally {
    sb.cleanup();
  }
}
console.log(
  `${stores} hostile stores from seed ${seed}: ${failed} with problems, ${((Date.now() - started) / stores).toFixed(0)} ms per store`,
);
process.exit(failed > 0 ? 1 : 0);
