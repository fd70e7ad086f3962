// The offline Playground's simulation: requests fired at the rate limiter component running in the
// page (see deployment.ts), on a simulated clock that moves only when asked to, or when the
// deployment's own clock is past it. Every decision, every reading of the tokens available and
// every validation error is the component's own answer at that simulated instant; this file only
// chooses the instants and keeps the record.
//
// The deployment's clock moves with its commits, as a real deployment's does: a call never runs at
// an instant before a commit it can see. So requests "at once" are decided at the instants the
// deployment gives them (two requests in a ms, then the next ms: 0, 0, 1, 1, 2 ms for a burst of
// five), and the simulated clock follows: it is never behind the deployment's, so each reading the
// Playground shows was taken at the instant it is drawn at.
//
// The chart's curve is the limit's total as `getValue` reports it (every shard read), sampled
// between events: at the instant it is full again (found by asking), at each window boundary of a
// fixed or approximate sliding window, when each take leaves an exact sliding window, and, for a
// sharded token bucket, evenly in between (its shards fill one by one).
import { isInvalidRateLimitError, type InvalidRateLimitError, type RateLimitConfig } from "convex-rate-limiter";
import type { Point } from "../monitor/model.js";
import { outcomeOf, type Entry } from "../playground/decisions.js";
import type { Decision, Lane, LaneRequest, Verdict } from "./lane.js";

/** The simulated clock's 0, as an instant (ms since the epoch): 2025-01-01 00:00 UTC. */
export const ORIGIN = Date.UTC(2025, 0, 1);

/** The least span (ms) projected after now, so a projection is always visible. */
const MIN_LOOKAHEAD = 2000;
/** The most window boundaries read per stretch of time; past that, the steps are sampled evenly. */
const MAX_BOUNDARIES = 400;
/** The most entries kept in the log. */
const MAX_ENTRIES = 500;

/** What the Playground shows; instants are ms on the simulated clock (0 at the start). */
export type Snapshot = {
  /** The simulated clock. */
  clock: number;
  /** The limit as configured now. */
  config: RateLimitConfig;
  /** The requests fired, oldest first. */
  entries: readonly Entry[];
  /** The limit's tokens from 0 to `clock`: a drop at each request, a jump at each config change. */
  past: readonly Point[];
  /** The tokens from `clock` on if no more requests come, up to where the chart ends. */
  future: readonly Point[];
  /** The tokens available at `clock`, after any request made then. */
  available: number;
  /** Ms from `clock` until the limit is full again with no more requests; 0 if it is. */
  untilFull: number;
  /** The instants the config was changed at. */
  changes: readonly number[];
};

function sameConfig(a: RateLimitConfig, b: RateLimitConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The whole limit's capacity: `capacity`, defaulting to `rate`. */
function capacityOf(config: RateLimitConfig): number {
  return config.capacity ?? config.rate;
}

/**
 * Drops points that lie on the straight line through their neighbours (a token bucket rising
 * evenly, or flat at capacity), keeping drops and corners. Only for curves drawn with straight
 * lines: a step curve's corners can be collinear.
 */
export function simplify(points: readonly Point[]): Point[] {
  const out: Point[] = [];
  for (const p of points) {
    const a = out.at(-2);
    const b = out.at(-1);
    if (a !== undefined && b !== undefined && a.t < b.t && b.t < p.t) {
      const predicted = a.v + ((b.v - a.v) * (p.t - a.t)) / (b.t - a.t);
      if (Math.abs(predicted - p.v) <= 1e-9 * Math.max(1, Math.abs(p.v))) out.pop();
    }
    out.push(p);
  }
  return out;
}

/**
 * Simulation runs the Playground against one lane of an in-browser deployment. Operations run one
 * after another, in the order they were asked for; the listener (see `listen`) hears each new
 * snapshot.
 */
export class Simulation {
  #clock = 0;
  #config: RateLimitConfig;
  #entries: Entry[] = [];
  #past: Point[] = [];
  #future: Point[] = [];
  #available: number;
  #untilFull = 0;
  #changes: number[] = [];
  /** Whether the last point of `#past` is a config change's, at the current instant. */
  #lastIsChange = false;
  #nextId = 1;
  #queue: Promise<void> = Promise.resolve();
  #listener: (snapshot: Snapshot) => void = () => {};

  private constructor(
    private readonly lane: Lane,
    config: RateLimitConfig,
  ) {
    this.#config = config;
    this.#available = capacityOf(config);
  }

  /** start opens a simulation at clock 0 with `config`, reading the lane's state at that instant. */
  static async start(lane: Lane, config: RateLimitConfig): Promise<Simulation> {
    const sim = new Simulation(lane, config);
    await sim.#enqueue(async () => {
      sim.#available = await lane.available(ORIGIN, config);
      sim.#past = [{ t: 0, v: sim.#available }];
      await sim.#project();
    });
    return sim;
  }

  /**
   * replay fires `requests` again, each at its own instant, on a fresh `lane` under `config`, then
   * moves the clock to `clock`: what the same traffic would have met under another limit. A
   * request whose instant the deployment's clock has passed (it commits differently under the
   * other limit) is fired at the clock.
   */
  static async replay(
    lane: Lane,
    config: RateLimitConfig,
    requests: readonly Pick<Entry, "t" | "count" | "reserve">[],
    clock: number,
  ): Promise<Simulation> {
    const sim = await Simulation.start(lane, config);
    for (const r of [...requests].sort((a, b) => a.t - b.t)) {
      if (r.t > sim.#clock) await sim.wait(r.t - sim.#clock);
      await sim.fire({ config, count: r.count, reserve: r.reserve }, 1);
    }
    if (clock > sim.#clock) await sim.wait(clock - sim.#clock);
    return sim;
  }

  /** listen makes `listener` hear the snapshot after each operation (one listener at a time). */
  listen(listener: (snapshot: Snapshot) => void): void {
    this.#listener = listener;
  }

  /** snapshot returns what the Playground shows now (copies, safe to keep). */
  snapshot(): Snapshot {
    return {
      clock: this.#clock,
      config: this.#config,
      entries: [...this.#entries],
      past: [...this.#past],
      future: [...this.#future],
      available: this.#available,
      untilFull: this.#untilFull,
      changes: [...this.#changes],
    };
  }

  /**
   * fire sends `n` requests from the current instant, one after another, each as soon as the
   * deployment can take it: a request is decided at the clock, which moves on when the
   * deployment's does (after two requests in one ms, to the next ms).
   */
  fire(request: LaneRequest, n: number): Promise<void> {
    return this.#enqueue(async () => {
      await this.#applyConfig(request.config);
      for (let i = 0; i < n; i++) {
        const id = this.#nextId++;
        const sharded = (request.config.shards ?? 1) > 1;
        const base = { id, count: request.count, reserve: request.reserve, sharded };
        const verdict = await this.#decide(request);
        if (!verdict.ok) {
          this.#entries.push({ ...base, t: this.#clock, outcome: { kind: "invalid", message: verdict.error.message }, after: undefined });
          continue;
        }
        // The clock is the deployment's (see #catchUp), so the request was decided at it.
        const { result, after, at } = verdict.decision;
        const t = at - ORIGIN;
        if (t !== this.#clock) throw new Error(`the deployment decided a request at ${t} ms, not at the clock's ${this.#clock} ms`);
        this.#entries.push({ ...base, t, outcome: outcomeOf(result, t), after, shards: result.details.shards });
        this.#past.push({ t, v: after });
        this.#lastIsChange = false;
        this.#available = after;
        await this.#catchUp();
      }
      this.#entries = this.#entries.slice(-MAX_ENTRIES);
      await this.#project();
    });
  }

  /** wait moves the clock `ms` ahead (whole ms), recording the tokens on the way. */
  wait(ms: number): Promise<void> {
    return this.#enqueue(async () => {
      const to = this.#clock + Math.max(0, Math.round(ms));
      if (to === this.#clock) return;
      await this.#advance(to);
      await this.#project();
    });
  }

  /** waitUntilFull moves the clock to the instant the limit is full again. */
  async waitUntilFull(): Promise<void> {
    await this.#queue;
    await this.wait(this.#untilFull);
  }

  /**
   * setConfig changes the limit from the current instant on, as a deployment does when calls start
   * passing another config: the rows stay, and are read under the new config from now on.
   */
  setConfig(config: RateLimitConfig): Promise<void> {
    return this.#enqueue(async () => {
      if (await this.#applyConfig(config)) await this.#project();
    });
  }

  /** check asks the component about `request` at the current instant, taking nothing. */
  async check(request: LaneRequest): Promise<Verdict> {
    await this.#queue;
    return this.lane.check(ORIGIN + this.#clock, request);
  }

  /** Moves the clock to `to` (after it), recording the tokens on the way. */
  async #advance(to: number): Promise<void> {
    const stretch = await this.#curve(this.#clock, to);
    this.#past = [...this.#past, ...stretch.slice(1)];
    this.#lastIsChange = false;
    this.#clock = to;
    this.#available = stretch.at(-1)?.v ?? this.#available;
  }

  /**
   * Moves the clock to the deployment's when a commit has put it ahead (two requests in one ms: the
   * next call runs a ms later), so every reading and request after it happens at the clock.
   */
  async #catchUp(): Promise<void> {
    const now = (await this.lane.now(ORIGIN + this.#clock)) - ORIGIN;
    if (now > this.#clock) await this.#advance(now);
  }

  /** Runs `op` after every operation asked for before it, then reports the new snapshot. */
  #enqueue(op: () => Promise<void>): Promise<void> {
    const run = async () => {
      await op();
      this.#listener(this.snapshot());
    };
    const next = this.#queue.then(run, run);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Switches to `config` at the current instant; true if it changed anything. The curve jumps
   * there to what the new config makes of the state, once: a config typed in several steps at one
   * instant (5, then 50) leaves one jump, to the last; and before any request or wait (a fresh
   * start, or just after Reset) there is no history to divide, so the curve starts from the new
   * config, with no spike to the old one's capacity.
   */
  async #applyConfig(config: RateLimitConfig): Promise<boolean> {
    if (sameConfig(config, this.#config)) return false;
    this.#config = config;
    const started = this.#entries.length > 0 || this.#clock > 0;
    if (started && this.#changes.at(-1) !== this.#clock) this.#changes.push(this.#clock);
    this.#available = await this.lane.available(ORIGIN + this.#clock, config);
    const point = { t: this.#clock, v: this.#available };
    if (!started) {
      this.#past = [point];
    } else {
      if (this.#lastIsChange) this.#past.pop();
      const last = this.#past.at(-1);
      // Only a point pushed here is the change's own, for a later change at this instant to replace.
      this.#lastIsChange = last === undefined || last.v !== point.v || last.t !== point.t;
      if (this.#lastIsChange) this.#past.push(point);
    }
    return true;
  }

  /** Fires one request at the current instant; an impossible one comes back as its error. */
  async #decide(request: LaneRequest): Promise<{ ok: true; decision: Decision } | { ok: false; error: InvalidRateLimitError }> {
    try {
      return { ok: true, decision: await this.lane.limit(ORIGIN + this.#clock, request) };
    } catch (error) {
      if (isInvalidRateLimitError(error)) return { ok: false, error: error.data };
      throw error;
    }
  }

  /** Recomputes the projection from the current instant. */
  async #project(): Promise<void> {
    const refill = (await this.lane.refillAt(ORIGIN + this.#clock, this.#config)) - ORIGIN;
    this.#untilFull = refill - this.#clock;
    const lookahead = Math.max(MIN_LOOKAHEAD, this.#untilFull * 1.15, this.#clock * 0.2);
    this.#future = await this.#curve(this.#clock, this.#clock + Math.round(lookahead), refill);
  }

  /**
   * The tokens over [a, b] under the current config with no requests in between, from the
   * component: exact at `a`, at `b`, at the instant the limit is full again and at every window
   * boundary; a sharded token bucket is also read evenly in between.
   */
  async #curve(a: number, b: number, knownRefill?: number): Promise<Point[]> {
    const config = this.#config;
    const capacity = capacityOf(config);
    const at = async (t: number): Promise<Point> => ({ t, v: await this.lane.available(ORIGIN + t, config) });
    const points: Point[] = [await at(a)];
    switch (config.kind) {
      case "token bucket": {
        const refill = knownRefill ?? (await this.lane.refillAt(ORIGIN + a, config)) - ORIGIN;
        // Rising until `rise`: level from then on, or still rising at `b`.
        const rise = Math.min(b, refill);
        // One shard rises in a straight line; several fill one by one, each a corner.
        const shards = config.shards ?? 1;
        const between = shards > 1 ? Math.min(64, 16 * (shards - 1)) : 0;
        for (let i = 1; i <= between && rise > a; i++) {
          const t = a + Math.round(((rise - a) * i) / (between + 1));
          if (t > (points.at(-1)?.t ?? a) && t < rise) points.push(await at(t));
        }
        if (rise > a) points.push(await at(rise));
        // Level from `refill` on: full, or as full as the component lets this row get.
        const top = points.at(-1)?.v ?? capacity;
        if (b > rise) points.push({ t: b, v: top });
        // Straight stretches need only their ends (a fixed window's steps need every corner).
        return simplify(points);
      }
      case "fixed window": {
        const phase = await this.lane.phase(ORIGIN + a, config);
        const first = Math.floor((ORIGIN + a - phase) / config.period) + 1;
        const boundaries = Math.floor((ORIGIN + b - phase) / config.period) - first + 1;
        if (boundaries > MAX_BOUNDARIES) {
          for (let i = 1; i <= MAX_BOUNDARIES; i++) points.push(await at(a + Math.round(((b - a) * i) / MAX_BOUNDARIES)));
          break;
        }
        // Read boundaries until the tokens stop rising: full, or as full as the row gets.
        let level = (points[0]?.v ?? 0) >= capacity;
        for (let k = first; !level && k < first + boundaries; k++) {
          const before = points.at(-1)?.v;
          const p = await at(phase + k * config.period - ORIGIN);
          points.push(p);
          level = p.v >= capacity || p.v === before;
        }
        const last = points.at(-1);
        if (last !== undefined && last.t < b) points.push({ t: b, v: last.v });
        break;
      }
      case "sliding window": {
        if (config.exact !== false) {
          // Steps: each take's tokens come back when it leaves the window, a period after it was
          // taken (a row carried over from another config: after its last write, also a request's
          // instant). Read the component at each request's instant plus a period, and at `b`.
          const backs = [...new Set(this.#entries.map((e) => e.t + config.period))].filter((t) => t > a && t < b).sort((x, y) => x - y);
          for (const t of backs.slice(0, MAX_BOUNDARIES)) points.push(await at(t));
          if (b > a) points.push(await at(b));
          return points;
        }
        // Straight lines between window boundaries: within a window the tokens rise at what the
        // window before took, per period, as it slides out; at a boundary the window just ended
        // becomes the one sliding out, so the slope changes there. The row is full by the second
        // boundary after its own instant, which may lie after `a` (a row carried over from
        // another config is anchored where its old promise ends): read boundaries until full.
        const phase = await this.lane.phase(ORIGIN + a, config);
        const first = Math.floor((ORIGIN + a - phase) / config.period) + 1;
        // Full up to float error in the sum of the shards' tokens.
        const isFull = (v: number) => v >= capacity - 1e-9 * Math.max(1, capacity);
        let full = isFull(points[0]?.v ?? 0);
        for (let k = first; !full && k < first + MAX_BOUNDARIES; k++) {
          const boundary = phase + k * config.period - ORIGIN;
          if (boundary >= b) break;
          const p = await at(boundary);
          points.push(p);
          full = isFull(p.v);
        }
        const last = points.at(-1);
        if (last !== undefined && last.t < b) points.push(full ? { t: b, v: last.v } : await at(b));
        return simplify(points);
      }
      default: {
        const never: never = config;
        throw new Error(`unknown kind in ${JSON.stringify(never)}`);
      }
    }
    return points;
  }
}
