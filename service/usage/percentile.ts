/**
 * Nearest-rank percentiles (the smallest value with at least p% of the values at or below
 * it), by selection rather than a full sort: a year of turns is a million values.
 * Undefined for each p when there are no values.
 */
export function percentiles(values: readonly number[], ps: readonly number[]): Array<number | undefined> {
  if (values.length === 0) return ps.map(() => undefined);
  const a = Float64Array.from(values);
  return ps.map((p) => select(a, Math.min(a.length - 1, Math.max(0, Math.ceil((p / 100) * a.length) - 1))));
}

/** The k-th smallest value (0-based); reorders `a` (Hoare's quickselect, median of three). */
function select(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    const pivot = median3(a[lo]!, a[mid]!, a[hi]!);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i] = a[j]!;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

function median3(x: number, y: number, z: number): number {
  return Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
}
