// The statistics the benchmark reports on its timings: medians, quantiles and a distribution-free
// confidence interval for a median.

/** The median of `xs` (the mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}

/**
 * quantile returns the `q` quantile (0 to 1) of `xs`, interpolated linearly between the two
 * nearest values (the median for 0.5, the quartiles for 0.25 and 0.75).
 */
export function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

/**
 * medianInterval returns a distribution-free confidence interval for the median of the
 * population `xs` were drawn from: the order statistics `[x(k), x(n+1-k)]`, `k` the largest
 * rank whose two tails together hold at most `1 - confidence` of Binomial(n, 1/2). It assumes
 * only that the draws are independent. With too few draws for that confidence (at 95 %, up to 5),
 * it is their whole range, which covers less. It is exact up to about a thousand draws: beyond,
 * `2^-n` underflows to 0.
 */
export function medianInterval(xs: readonly number[], confidence = 0.95): [number, number] {
  const sorted = [...xs].sort((a, b) => a - b);
  const n = sorted.length;
  // P(Binomial(n, 1/2) <= j), for j = 0, 1, ...: the chance the median lies below x(j+1).
  let k = 0;
  let tail = 0;
  let term = 0.5 ** n; // C(n, 0) / 2^n
  for (let j = 0; j < n / 2; j++) {
    tail += term;
    if (2 * tail > 1 - confidence) break;
    k = j + 1;
    term = (term * (n - j)) / (j + 1);
  }
  const lo = Math.max(k, 1);
  return [sorted[lo - 1]!, sorted[n - lo]!];
}
