import { MemoryStore } from "../tools/memory-store.js";
import { seededRandom } from "../tools/random.js";
import type { RateLimitConfig } from "../src/shared/validators.js";
const MINUTE = 60000;
const kinds: RateLimitConfig[] = [
  { kind: "token bucket", rate: 60, period: MINUTE },
  { kind: "sliding window", rate: 60, period: MINUTE },
  { kind: "sliding window", rate: 100000, period: MINUTE },
];
const random = seededRandom(1);
const run = (config: RateLimitConfig, n: number, every: number) => {
  const store = new MemoryStore(); let now = 1.7e12; const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) store.limit({ name: "speed", key: "k", config }, (now += every), random);
  const u = process.cpuUsage(t0); return (u.user + u.system) / n;
};
const only = process.argv[2]; if (only) { for (let r = 0; r < 3; r++) console.log(run(kinds[Number(only)]!, 50000, 2000)); } else for (let r = 0; r < 6; r++) console.log(kinds.map((c, i) => run(c, 20000, i === 2 ? 2 : 2000).toFixed(2)).join("  "));
