// Generated hostile 0.8 stores (seeded; AWAITLESS_FUZZ_SEED and AWAITLESS_FUZZ_STORES pick them, the seed is printed
// on failure; bench/import-fuzz.ts runs many more) fed to `awaitless import`, then gc, list, inspect and logs of
// what came in: no crash, no canary text in any output, and nothing outside the data directory changed.
import { afterAll, expect, test } from "bun:test";
import { Sandbox } from "../helpers/cli.ts";
import { fuzzOne } from "../helpers/import-fuzz.ts";

const STORES = Number(process.env.AWAITLESS_FUZZ_STORES) || 8;
const SEED = Number(process.env.AWAITLESS_FUZZ_SEED) || Math.floor(Math.random() * 2 ** 31);

const boxes: Sandbox[] = [];
afterAll(() => {
  for (const b of boxes) b.cleanup();
});

test(`${STORES} generated hostile stores (seed ${SEED}): nothing outside the data directory changes, no canary shows`, () => {
  for (let i = 0; i < STORES; i++) {
    const sb = new Sandbox();
    boxes.push(sb);
    const seed = SEED + i;
    const problems = fuzzOne(sb, seed);
    if (problems.length > 0)
      console.error(`import fuzz: seed ${seed} (AWAITLESS_FUZZ_SEED=${seed} AWAITLESS_FUZZ_STORES=1)`);
    expect({ seed, problems }).toEqual({ seed, problems: [] });
  }
}, 240_000);
