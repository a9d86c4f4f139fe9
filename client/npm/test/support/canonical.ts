/**
 * Comparing values the way the shared vectors are written (client/vectors/README.md): rows
 * as JSON with every object's keys in order, a table's rows sorted by that text.
 */

/** `value` as JSON text with every object's keys in order, so that equal values compare equal. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonical).join(",")}]`;
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const fields = Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`);
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** `rows` in the vectors' order: sorted by their canonical text. */
export function sortedRows<T>(rows: readonly T[]): T[] {
  return rows
    .map((row) => [canonical(row), row] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, row]) => row);
}
