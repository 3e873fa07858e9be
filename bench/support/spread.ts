/**
 * The spread of a figure measured several times on a shared, noisy machine: its minimum, median and
 * maximum, printed together so that a median is never read without the noise around it.
 *
 * @example
 * const rps = spread([131, 140, 152]);
 * console.log(`${showSpread(rps)} requests/s`); // 131 / 140 / 152 requests/s
 */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: number[]): Spread {
  if (values.length === 0) return { min: Number.NaN, median: Number.NaN, max: Number.NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number };
}

/** `min / median / max`, each with `digits` decimals. */
export const showSpread = (figure: Spread, digits = 0): string =>
  [figure.min, figure.median, figure.max].map((value) => value.toFixed(digits)).join(' / ');
