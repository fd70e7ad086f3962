// Seeded randomness for tests, the benchmark and the demo, so that every run replays exactly.

/** seededRandom returns a generator of uniform draws in [0, 1) (mulberry32), fully determined by `seed`. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * streamSeed derives the seed of one independent stream from a run's seed and a label (FNV-1a
 * over the label), so that each stream replays on its own, whatever else ran before it.
 */
export function streamSeed(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * seedMathRandom replaces `Math.random` (which the component draws its shards from) with the
 * seeded stream `label` of `seed`. The caller restores the original when done.
 */
export function seedMathRandom(seed: number, label: string): void {
  Math.random = seededRandom(streamSeed(seed, label));
}
