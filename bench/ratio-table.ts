// The Slurm benches' result table: one row per measurement, its median beside the baseline's and their ratio.

export interface RatioRow {
  what: string;
  median: number;
  unit: string;
  baseline: string;
  baselineMedian: number;
}

/** Prints the rows as a markdown table (medians to 0.1, ratios to 0.001). */
export function printRatioTable(rows: RatioRow[]): void {
  const header = ["measurement", "median", "baseline", "baseline median", "ratio"];
  console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
  for (const r of rows) {
    const cells = [
      r.what,
      `${r.median.toFixed(1)} ${r.unit}`,
      r.baseline,
      `${r.baselineMedian.toFixed(1)} ${r.unit}`,
      `${(r.median / r.baselineMedian).toFixed(3)}×`,
    ];
    console.log(`| ${cells.join(" | ")} |`);
  }
}
