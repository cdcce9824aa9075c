// Intervals the page states, drawn exactly as the runner's Rust draws them
// (pipebench's stats module): the same SplitMix64 stream, the same resamples,
// the same widened percentile tails, so a lab check or a comparison judged here
// gives the verdict the server gives for the same runs. Pure: no DOM, no network.

/** The seed every interval uses ("pipebook" in ASCII), as the runner's does. */
export const DEFAULT_SEED = 0x7069_7065_626f_6f6bn;
/** Resamples drawn for an interval. */
export const RESAMPLES = 4000;
/** The confidence level of every interval stated. */
export const LEVEL = 0.95;

const MASK = (1n << 64n) - 1n;

/** A seeded SplitMix64 stream (Steele, Lea and Flood, 2014). */
export class SplitMix64 {
  constructor(seed) {
    this.state = BigInt.asUintN(64, BigInt(seed));
  }

  /** The next 64 bits, as a BigInt. */
  nextU64() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }

  /** An index below `n` (the same modulo the runner takes). */
  below(n) {
    return Number(this.nextU64() % BigInt(n));
  }
}

/** The median (the mean of the middle two for an even count), or null. */
export function median(values) {
  if (!values.length) return null;
  const s = Float64Array.from(values).sort();
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** The q quantile of sorted values, interpolated linearly (numpy's default). */
export function quantileSorted(sorted, q) {
  if (!sorted.length) return null;
  const h = (sorted.length - 1) * Math.min(Math.max(q, 0), 1);
  const low = Math.floor(h);
  const high = Math.ceil(h);
  return sorted[low] + (h - low) * (sorted[high] - sorted[low]);
}

// x to a whole power the way compiler-rt's __powidf2 (Rust's powi) multiplies,
// so both sides round alike.
function powi(a, b) {
  let r = 1;
  for (;;) {
    if (b & 1) r *= a;
    b = Math.trunc(b / 2);
    if (b === 0) break;
    a *= a;
  }
  return r;
}

/** The standard normal's distribution function (Numerical Recipes' erfc fit). */
export function normalCdf(x) {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * z);
  const poly =
    -z * z -
    1.26551223 +
    t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const erfc = t * Math.exp(poly);
  return x >= 0 ? 1 - erfc / 2 : erfc / 2;
}

/** z with P(Z > z) = p, by bisection. */
export function normalQuantileUpper(p) {
  let low = -10;
  let high = 10;
  for (let i = 0; i < 60; i += 1) {
    const mid = (low + high) / 2;
    if (1 - normalCdf(mid) > p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/** Student's t quantile matching the normal quantile z (Cornish-Fisher, A&S 26.7.5). */
export function studentTQuantile(z, df) {
  const [z3, z5, z7, z9] = [powi(z, 3), powi(z, 5), powi(z, 7), powi(z, 9)];
  return (
    z +
    (z3 + z) / (4 * df) +
    (5 * z5 + 16 * z3 + 3 * z) / (96 * powi(df, 2)) +
    (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * powi(df, 3)) +
    (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * powi(df, 4))
  );
}

/** The lower tail of Hesterberg's expanded percentile interval at `level` over n. */
export function expandedTail(level, n) {
  const df = n - 1;
  const z = normalQuantileUpper((1 - level) / 2);
  return normalCdf(-Math.sqrt(n / df) * studentTQuantile(z, df));
}

const positive = (v) => typeof v === "number" && Number.isFinite(v) && v > 0;

/**
 * median(a) / median(b) and its interval over two separate sets of runs: each
 * resample draws a.length runs from a, then b.length from b. Null when a side
 * has fewer than two runs or a value is not a positive number.
 * Returns {ratio, low, high}.
 */
export function ratioOfMediansUnpaired(a, b, level = LEVEL, resamples = RESAMPLES, seed = DEFAULT_SEED) {
  if (a.length < 2 || b.length < 2 || resamples === 0) return null;
  if (![...a, ...b].every(positive)) return null;
  const ratio = median(a) / median(b);
  const rng = new SplitMix64(seed);
  const ratios = new Float64Array(resamples);
  const ra = new Array(a.length);
  const rb = new Array(b.length);
  for (let r = 0; r < resamples; r += 1) {
    for (let i = 0; i < a.length; i += 1) ra[i] = a[rng.below(a.length)];
    for (let i = 0; i < b.length; i += 1) rb[i] = b[rng.below(b.length)];
    ratios[r] = median(ra) / median(rb);
  }
  ratios.sort();
  const tail = expandedTail(level, Math.min(a.length, b.length));
  return { ratio, low: quantileSorted(ratios, tail), high: quantileSorted(ratios, 1 - tail) };
}

/**
 * The same over pairs (a[i], b[i]) run back to back: whole pairs are resampled.
 * Null with fewer than two pairs, unequal lengths or a value that is not positive.
 */
export function ratioOfMediansPaired(a, b, level = LEVEL, resamples = RESAMPLES, seed = DEFAULT_SEED) {
  const n = a.length;
  if (n < 2 || b.length !== n || resamples === 0) return null;
  if (![...a, ...b].every(positive)) return null;
  const ratio = median(a) / median(b);
  const rng = new SplitMix64(seed);
  const ratios = new Float64Array(resamples);
  const ra = new Array(n);
  const rb = new Array(n);
  for (let r = 0; r < resamples; r += 1) {
    for (let i = 0; i < n; i += 1) {
      const pick = rng.below(n);
      ra[i] = a[pick];
      rb[i] = b[pick];
    }
    ratios[r] = median(ra) / median(rb);
  }
  ratios.sort();
  const tail = expandedTail(level, n);
  return { ratio, low: quantileSorted(ratios, tail), high: quantileSorted(ratios, 1 - tail) };
}
