// Plain-text tables for an 80-column terminal.

/** A column: its title and whether its cells are right-aligned (numbers) or left-aligned. */
export type Column = { title: string; right?: boolean };

/** Renders rows under a header and a rule, columns two spaces apart, each as wide as it needs. */
export function table(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.title.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    columns
      .map((c, i) => {
        const cell = cells[i] ?? "";
        return c.right ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!);
      })
      .join("  ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [line(columns.map((c) => c.title)), rule, ...rows.map(line)].join("\n");
}

/** Formats a number with a fixed number of decimals and thousands separators. */
export function num(x: number, decimals = 0): string {
  return x.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** Formats a fraction as a percentage. */
export function pct(x: number, decimals = 1): string {
  return `${(x * 100).toFixed(decimals)}%`;
}

/** Formats a share of requests: "0" for none, "<0.01%" below a hundredth of a percent, else two decimals. */
export function share(x: number): string {
  return x === 0 ? "0" : x < 0.0001 ? "<0.01%" : pct(x, 2);
}
