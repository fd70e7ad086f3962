// The demo's scenarios: scripted traffic through the example app's own Convex functions, on
// convex-test, under a simulated clock. Each scenario runs on a fresh app, moves the clock from
// event to event (scheduled functions fire at their own instants on the way), samples the tokens
// available through the limiter's getValue, and hands its records to the pure checks in bounds.ts
// and tools/bounds.ts. Needs vite's module runner (tools/run.mjs): convex-test loads modules with
// `import.meta.glob`.
import type { SessionId } from "convex-helpers/server/sessions";
import {
  calendarWindow,
  calculateRateLimit,
  HOUR,
  isRateLimitError,
  MINUTE,
  RateLimiter,
  SECOND,
  type GetValueReturns,
  type RateLimitConfig,
  type RateLimitState,
} from "convex-rate-limiter";
import { limitOf, maxInWindow, windowIndex, worstExcess, type Taken } from "../../tools/bounds.js";
import type { installClock } from "../../tools/clock.js";
import { seededRandom, seedMathRandom, streamSeed } from "../../tools/random.js";
import { api, components, internal } from "../convex/_generated/api.js";
import { ADMIN_EMAILS, PRO_MULTIPLIER, proConfig } from "../convex/admin.js";
import type { Id } from "../convex/_generated/dataModel.js";
import { rateLimiter } from "../convex/limits.js";
import { JITTER_MS } from "../convex/llm.js";
import { makeTest, quietCrashes } from "../convex/test.setup.js";
import { ceiling, disagreements, heldAtOnce, leaseDisagreements, replay, timing, type Decision, type LeaseDecision } from "./bounds.js";
import { clockTime, duration, num, pct, spread, waits, type SummaryRow } from "./format.js";
import { minutesFor, type Options } from "./options.js";
import type { Progress } from "./progress.js";
import { Timeline } from "./timeline.js";
import type { ChartData, Check, Mark, Point, ScenarioResult } from "./types.js";

/** A fixed window's config (the public package names only the union). */
type FixedWindowConfig = Extract<RateLimitConfig, { kind: "fixed window" }>;

/** The simulated clock starts every scenario here: Wednesday 2025-01-01, 09:20 UTC. */
export const T0 = Date.UTC(2025, 0, 1, 9, 20);

/** How many times each chart samples the tokens available (the HTML chart draws them all). */
const SAMPLES = 300;
/** Float slack when comparing token sums with a bound. */
const EPSILON = 1e-6;

type Test = ReturnType<typeof makeTest>;
type Clock = ReturnType<typeof installClock>;

/** What a scenario needs from the program: the installed clock, the options, the progress line. */
export type RunContext = { clock: Clock; opts: Options; progress: Progress };

/** A named limit's config from the app's `RateLimiter` (limits.ts). */
function named(name: keyof NonNullable<typeof rateLimiter.limits>): RateLimitConfig {
  const config = rateLimiter.limits?.[name];
  if (config === undefined || config.kind === "concurrency") throw new Error(`limits.ts has no rate limit ${name}`);
  // A calendar quota as the fixed window it runs as, which the algebra evaluates.
  return config.kind === "calendar" ? calendarWindow(config) : config;
}

/** The tokens a `getValue` result says are available now (every shard, when all were read). */
function available(v: GetValueReturns & { total?: { value: number } }, now: number): number {
  // The row as reported, with an approximate sliding window's `prev` or an exact one's `log`.
  return v.total?.value ?? calculateRateLimit(v, v.config, now).value;
}

/** Describes a config in words: "token bucket, 10 per 1m, capacity 3". */
function describe(config: RateLimitConfig): string {
  const unit = { [SECOND]: "second", [MINUTE]: "minute", [HOUR]: "hour", [24 * HOUR]: "day" }[config.period];
  const kind = config.kind === "sliding window" ? `${config.exact === false ? "approximate" : "exact"} sliding window` : config.kind;
  const parts = [`${kind}, ${num(config.rate)} per ${unit ?? duration(config.period)}`];
  // A sliding window's capacity is its rate, always.
  if (config.kind !== "sliding window") parts.push(`capacity ${num(config.capacity ?? config.rate)}`);
  if (config.maxReserved !== undefined) parts.push(`max reserved ${num(config.maxReserved)}`);
  if (config.shards !== undefined) parts.push(`${config.shards} shards`);
  if (config.lockout !== undefined) parts.push(`lockout ${duration(config.lockout)}`);
  return parts.join(", ");
}

/** A signed-in user of the app, as convex-test's `withIdentity` takes it: `name`'s key is `demo|name`. */
function signedIn(name: string): { tokenIdentifier: string; name: string } {
  return { tokenIdentifier: `demo|${name}`, name };
}

/** Poisson arrivals in [from, to) at `perMs(t)` requests per ms (piecewise constant is fine). */
function arrivals(from: number, to: number, perMs: (t: number) => number, random: () => number): number[] {
  const out: number[] = [];
  // Thinning: draw at the peak rate, keep each with probability rate(t) / peak.
  let peak = 0;
  for (let t = from; t < to; t += (to - from) / 1000) peak = Math.max(peak, perMs(t));
  if (!(peak > 0)) return out;
  let t = from;
  for (;;) {
    t += -Math.log(1 - random()) / peak;
    if (t >= to) return out;
    if (random() * peak < perMs(t)) out.push(Math.floor(t));
  }
}

/** One scenario's run: a fresh app, the timeline driving it, and a count of the calls made. */
class Run {
  readonly t: Test;
  readonly timeline: Timeline;
  readonly started = performance.now();
  calls = 0;

  /** @param label Names the scenario's stream of `Math.random` (shard picks, the LLM jitter). */
  constructor(
    readonly ctx: RunContext,
    label: string,
  ) {
    // The previous scenario left no timers behind (see drain), so moving the clock shifts none.
    ctx.clock.setSystemTime(T0);
    seedMathRandom(ctx.opts.seed, `Math.random/${label}`);
    this.t = makeTest();
    this.timeline = new Timeline((at) => this.advanceTo(at));
  }

  /**
   * Moves the clock to `at`, firing every timer due on the way at its own instant and waiting for
   * the scheduled functions it starts, so each job sees the clock of its own time.
   */
  async advanceTo(at: number): Promise<void> {
    const clock = this.ctx.clock;
    // Timers fire on whole ms.
    const target = Math.ceil(at);
    if (target <= clock.now) return;
    // A no-op timer marks the target, so stepping stops there rather than jumping past it.
    clock.setTimeout(() => {}, target - clock.now);
    while (clock.now < target) {
      if (clock.countTimers() === 0) throw new Error(`the clock stalled at ${clock.now} before ${target}`);
      clock.next();
      await this.t.finishInProgressScheduledFunctions();
    }
  }

  /** Runs every timer left (scheduled functions), each at its own instant. */
  async drain(): Promise<void> {
    while (this.ctx.clock.countTimers() > 0) {
      this.ctx.clock.next();
      await this.t.finishInProgressScheduledFunctions();
    }
  }

  /** Makes one convex-test call, counting it and reporting progress now and then. */
  async call<R>(f: (t: Test) => Promise<R>): Promise<R> {
    this.calls++;
    if (this.calls % 50 === 0) {
      const elapsed = Date.now() - T0;
      this.ctx.progress.update(`${num(this.calls)} calls, simulated ${duration(elapsed)}`);
    }
    return f(this.t);
  }

  /**
   * now returns the instant (ms) a call made next runs at: the clock's, or later when commits have
   * moved the deployment's clock past it (a deployment's time never runs behind a commit it can
   * see; on convex-test, with the clock frozen, the third call in a ms runs in the next). It asks
   * with a query, which commits nothing, so the next call runs at exactly that instant: what a
   * scenario records a decision at.
   */
  now(): Promise<number> {
    return this.call((t) => t.query(async () => Date.now()));
  }

  /**
   * Schedules `samples + 1` samples of `sample()` across [from, to], pushed into `into` at the
   * instant each was read.
   */
  sampleEvenly(from: number, to: number, into: Point[], sample: () => Promise<number>, samples = SAMPLES): void {
    for (let k = 0; k <= samples; k++) {
      const at = from + Math.round(((to - from) * k) / samples);
      this.timeline.at(at, async () => {
        const readAt = await this.now();
        into.push({ at: readAt, value: await sample() });
      });
    }
  }

  get wallMs(): number {
    return performance.now() - this.started;
  }
}

/** A check that a worst excess (tokens over the bound) is not positive. */
function boundCheck(name: string, excess: number): Check {
  if (excess === -Infinity) return { name, ok: true, detail: "nothing was let through" };
  return {
    name,
    ok: excess <= EPSILON,
    detail:
      excess > EPSILON
        ? `an interval went ${num(excess, 2)} tokens over it`
        : excess >= -EPSILON
          ? "the fullest interval reached it exactly"
          : `the fullest interval stayed ${num(-excess, 2)} tokens under it`,
  };
}

/** A check that the server's decisions match the pure replay. */
function agreementCheck(actual: readonly Decision[], expected: readonly Decision[]): Check {
  const diff = disagreements(actual, expected);
  return {
    name: "the server decided exactly as calculateRateLimit predicts",
    ok: diff.length === 0,
    detail: diff.length === 0 ? `${num(actual.length)} decisions replayed on one exact row` : diff.join("; "),
  };
}

// ---------------------------------------------------------------------------------------------
// 1. messages: users burst, then send when the chat box says they may

const NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"];

type User = {
  name: string;
  sessionId: SessionId;
  decisions: Decision[];
  /** Per burst: attempts made, and how many went through. */
  bursts: { attempts: number; admitted: number }[];
  /** Waits the chat box's countdown showed (from the hook query), and how those sends went. */
  hookWaits: number[];
  timed: { sent: number; admitted: number };
};

/** messages runs users who burst chat messages, then send as the chat box's countdown allows. */
export async function messages(ctx: RunContext): Promise<ScenarioResult> {
  const run = new Run(ctx, "messages");
  const config = named("sendMessage");
  const end = T0 + minutesFor("messages", ctx.opts) * MINUTE;
  const users: User[] = Array.from({ length: ctx.opts.users }, (_, i) => ({
    name: NAMES[i] ?? `user${i + 1}`,
    sessionId: `demo-session-${i + 1}` as SessionId,
    decisions: [],
    bursts: [],
    hookWaits: [],
    timed: { sent: 0, admitted: 0 },
  }));
  const watched = users[0]!;
  const marks: Mark[] = [];
  const points: Point[] = [];

  const send = async (u: User): Promise<Decision> => {
    const at = await run.now();
    let d: Decision;
    try {
      await run.call((t) => t.mutation(api.messages.send, { sessionId: u.sessionId, body: `hello from ${u.name}` }));
      d = { at, count: 1, ok: true };
    } catch (e) {
      if (!isRateLimitError(e)) throw e;
      d = { at, count: 1, ok: false, retryAfter: e.data.retryAfter };
    }
    u.decisions.push(d);
    if (u === watched) marks.push({ at, kind: d.ok ? "admitted" : "refused" });
    return d;
  };

  // A burst: 4 to 7 messages 0.4 s apart, whatever the answers; then a few sent as the chat box
  // allows; then a pause of 20 to 60 s (long enough to refill the bucket), and again.
  const burst = (u: User, at: number, random: () => number): void => {
    if (at > end) return;
    const record = { attempts: 4 + Math.floor(random() * 4), admitted: 0 };
    u.bursts.push(record);
    for (let k = 0; k < record.attempts; k++) {
      run.timeline.at(at + k * 400, async () => {
        if ((await send(u)).ok) record.admitted++;
      });
    }
    run.timeline.at(at + record.attempts * 400, () => steady(u, 3 + Math.floor(random() * 5), random));
  };
  const steady = async (u: User, left: number, random: () => number): Promise<void> => {
    // What the chat box does with useRateLimit: read the bucket through the hook query and work
    // out, with the same calculateRateLimit, when one token will be there; send then.
    const now = await run.now();
    const state = await run.call((t) => t.query(api.messages.getRateLimit, { key: u.sessionId }));
    const wait = calculateRateLimit({ value: state.value, ts: state.ts }, state.config, now, 1).retryAfter ?? 0;
    if (now + wait > end) return;
    u.hookWaits.push(wait);
    run.timeline.at(now + wait, async () => {
      const d = await send(u);
      u.timed.sent++;
      if (d.ok) u.timed.admitted++;
      if (left > 1) await steady(u, left - 1, random);
      else burst(u, Date.now() + 20 * SECOND + Math.floor(random() * 40 * SECOND), random);
    });
  };

  users.forEach((u, i) => {
    const random = seededRandom(streamSeed(ctx.opts.seed, `messages/${u.name}`));
    // The watched user starts a little after T0, so the chart opens on a full bucket.
    burst(u, T0 + (i === 0 ? 5 * SECOND : Math.floor(random() * 20 * SECOND)), random);
  });
  run.sampleEvenly(T0, end, points, async () => {
    const v = await run.call((t) => t.query(api.messages.getRateLimit, { key: watched.sessionId }));
    return available(v, Date.now());
  });
  await run.timeline.runUntil(end);
  await run.drain();

  // Checks and summary.
  const limit = limitOf(config);
  const all = users.flatMap((u) => u.decisions);
  const admitted = all.filter((d) => d.ok).length;
  const worst = Math.max(...users.map((u) => worstExcess(u.decisions.filter((d) => d.ok), limit)));
  const replayed = users.flatMap((u) => replay(u.decisions, config));
  const timed = users.reduce((s, u) => ({ sent: s.sent + u.timed.sent, admitted: s.admitted + u.timed.admitted }), {
    sent: 0,
    admitted: 0,
  });
  const bursts = users.flatMap((u) => u.bursts);
  const ideal = replayed.filter((d) => d.ok).length;
  const bound = users.length * ceiling(limit, T0, end);
  const summary: SummaryRow[] = [
    { label: "limit", value: "sendMessage", note: `${describe(config)}; one bucket per sender` },
    { label: "users", value: num(users.length), note: `chart: ${watched.name}'s bucket (${ctx.opts.users > 1 ? "all users in the numbers" : "the only user"})` },
    { label: "attempts", value: num(all.length), note: `${num(bursts.length)} bursts, ${num(timed.sent)} sends timed by the chat box` },
    { label: "admitted", value: num(admitted), note: pct(admitted / Math.max(1, all.length)) },
    {
      label: "refused",
      value: num(all.length - admitted),
      note: `${num(all.length - admitted - (timed.sent - timed.admitted))} in bursts, ${num(timed.sent - timed.admitted)} of the timed sends`,
    },
    {
      label: "per burst",
      value: `${num(spread(bursts.map((b) => b.admitted)).mean, 1)} ok`,
      note: `of ${num(spread(bursts.map((b) => b.attempts)).min)} to ${num(spread(bursts.map((b) => b.attempts)).max)} attempts: the capacity of ${num(limit.capacity)}, then refusals`,
    },
    { label: "refusal waits", value: waits(all.filter((d) => !d.ok).map((d) => d.retryAfter ?? 0)), note: "retryAfter, until a token is back" },
    { label: "countdowns", value: waits(users.flatMap((u) => u.hookWaits)), note: `the chat box's wait before each timed send: a token every ${duration(limit.period / limit.rate)}` },
    { label: "vs exact", value: pct(admitted / Math.max(1, ideal)), note: `admitted / what one exact row admits for the same attempts (${num(ideal)})` },
    { label: "vs ceiling", value: pct(admitted / bound), note: `of ${num(bound, 0)} = users x (capacity + rate x time); users pause between bursts` },
  ];
  const checks: Check[] = [
    boundCheck("no sender was ever over capacity + rate x time", worst),
    agreementCheck(all, replayed),
    {
      name: "every send timed by the hook's countdown went through",
      ok: timed.admitted === timed.sent,
      detail: `${num(timed.admitted)} of ${num(timed.sent)}`,
    },
  ];
  return {
    id: "messages",
    title: "messages: users burst, then wait for the countdown",
    about: [
      `${users.length} user${users.length === 1 ? "" : "s"} chat through messages.send (a session mutation) for ${duration(end - T0)}. Each sends a burst of 4 to 7 messages 0.4 s apart, then a few more, each when the chat box's countdown (messages.getRateLimit + calculateRateLimit, as useRateLimit does) says a token is back, then pauses 20 to 60 s.`,
    ],
    chart: { title: `tokens of sendMessage for ${watched.name}`, start: T0, end, points, capacity: limit.capacity, marks },
    summary,
    checks,
    calls: run.calls,
    wallMs: run.wallMs,
  };
}

// ---------------------------------------------------------------------------------------------
// 2. signups: a flood against one global fixed window, with the default phase and with `start`

/** Midnight UTC of the simulated day: with it as `start`, windows open on the hour. */
const MIDNIGHT = Date.UTC(2025, 0, 1);

/** signups floods freeTrialSignUp, once as declared (default phase) and once with a `start`. */
export async function signups(ctx: RunContext): Promise<ScenarioResult[]> {
  return [await signupVariant(ctx, "default"), await signupVariant(ctx, "start")];
}

async function signupVariant(ctx: RunContext, variant: "default" | "start"): Promise<ScenarioResult> {
  const run = new Run(ctx, `signups/${variant}`);
  const base = named("freeTrialSignUp");
  if (base.kind !== "fixed window") throw new Error("freeTrialSignUp is expected to be a fixed window");
  const config: FixedWindowConfig = variant === "default" ? base : { ...base, start: MIDNIGHT };
  // The example declares freeTrialSignUp without a start; this variant declares the same limit
  // with one, as an app would, and signs up as signups.signUp does.
  const aligned = new RateLimiter(components.rateLimiter, { freeTrialSignUp: config });
  const end = T0 + minutesFor("signups", ctx.opts) * MINUTE;
  const decisions: Decision[] = [];
  const marks: Mark[] = [];
  const points: Point[] = [];
  let last: GetValueReturns | undefined;

  const signUp = async (name: string): Promise<void> => {
    if (variant === "default") {
      await run.call((t) => t.mutation(api.signups.signUp, { name, password: "pw" }));
      return;
    }
    await run.call((t) =>
      t.run(async (c) => {
        await aligned.limit(c, "freeTrialSignUp", { throws: true });
        await c.db.insert("users", { name, password: "pw" });
      }),
    );
  };
  // Both variants see the same arrivals.
  const random = seededRandom(streamSeed(ctx.opts.seed, "signups"));
  const times = arrivals(T0, end, () => ctx.opts.signups / HOUR, random);
  times.forEach((arrival, i) =>
    run.timeline.at(arrival, async () => {
      const at = await run.now();
      try {
        await signUp(`visitor${i + 1}`);
        decisions.push({ at, count: 1, ok: true });
        marks.push({ at, kind: "admitted" });
      } catch (e) {
        if (!isRateLimitError(e)) throw e;
        decisions.push({ at, count: 1, ok: false, retryAfter: e.data.retryAfter });
        marks.push({ at, kind: "refused" });
      }
    }),
  );
  run.sampleEvenly(T0, end, points, async () => {
    const v = await run.call((t) =>
      t.run((c) => (variant === "default" ? rateLimiter : aligned).getValue(c, "freeTrialSignUp")),
    );
    last = v;
    return available(v, Date.now());
  });
  await run.timeline.runUntil(end);
  await run.drain();

  // A fixed window's row keeps the start of its current window as `ts`: that gives the phase.
  const phase = (((last?.ts ?? 0) % base.period) + base.period) % base.period;
  const limit = limitOf(config, phase);
  const admitted = decisions.filter((d) => d.ok);
  const refused = decisions.filter((d) => !d.ok);
  const replayed = replay(decisions, { ...config, start: phase });
  const ideal = replayed.filter((d) => d.ok).length;
  const bound = ceiling(limit, T0, end);
  const perWindow = new Map<number, number>();
  for (const d of admitted) {
    const w = Math.floor((d.at - phase) / base.period);
    perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
  }
  const firstOpen = phase + Math.floor((T0 - phase) / base.period) * base.period;
  const onBoundary = refused.filter((d) => ((d.at + (d.retryAfter ?? 0) - phase) % base.period) === 0).length;
  const opens = `:${clockTime(phase).slice(3)} past each hour`;
  const summary: SummaryRow[] = [
    { label: "limit", value: "freeTrialSignUp", note: `${describe(config)}; global (no key)` },
    {
      label: "windows open",
      value: opens,
      note: variant === "default" ? "a phase hashed from the name: apps' windows don't all open at once" : `start = ${new Date(MIDNIGHT).toISOString()}: on the hour`,
    },
    { label: "attempts", value: num(decisions.length), note: `about ${num(ctx.opts.signups)} an hour for ${duration(end - T0)}` },
    { label: "admitted", value: num(admitted.length), note: pct(admitted.length / Math.max(1, decisions.length)) },
    { label: "refused", value: num(refused.length) },
    {
      label: "per window",
      value: [...perWindow.values()].join(" | "),
      note: `the first one opened at ${clockTime(firstOpen)}, ${duration(T0 - firstOpen)} before the flood began`,
    },
    { label: "refusal waits", value: waits(refused.map((d) => d.retryAfter ?? 0)), note: "retryAfter: until the next window opens" },
    { label: "vs exact", value: pct(admitted.length / Math.max(1, ideal)), note: `admitted / what one exact row admits for the same attempts (${num(ideal)})` },
    { label: "vs ceiling", value: pct(admitted.length / bound), note: `of ${num(bound)} = capacity + rate x windows opened during the run` },
  ];
  const checks: Check[] = [
    boundCheck("never over capacity + rate x windows opened, in any interval", worstExcess(admitted, limit)),
    agreementCheck(decisions, replayed),
    {
      name: "every refusal's retryAfter ends exactly when a window opens",
      ok: onBoundary === refused.length,
      detail: `${num(onBoundary)} of ${num(refused.length)}`,
    },
  ];
  if (variant === "start") {
    const expected = ((MIDNIGHT % base.period) + base.period) % base.period;
    checks.push({
      name: "windows open where start puts them",
      ok: phase === expected,
      detail: `phase ${duration(phase)} into the hour, expected ${duration(expected)}`,
    });
  }
  return {
    id: "signups",
    title: `sign-ups flood a global fixed window (${variant === "default" ? "default phase" : "with start"})`,
    about: [
      variant === "default"
        ? `Visitors sign up through signups.signUp at about ${num(ctx.opts.signups)} an hour (Poisson arrivals) for ${duration(end - T0)}, against freeTrialSignUp as limits.ts declares it: no start, so the windows' phase is hashed from the limit's name.`
        : `The same visitors, against the same limit declared with start = midnight UTC (a RateLimiter built here with { ...freeTrialSignUp, start }, called as signUp calls it; the example has no sign-up with a start). Windows open on the hour.`,
    ],
    chart: { title: "tokens of freeTrialSignUp (everyone's)", start: T0, end, points, capacity: limit.capacity, marks },
    summary,
    checks,
    calls: run.calls,
    wallMs: run.wallMs,
  };
}

// ---------------------------------------------------------------------------------------------
// 3. llm: requests reserve tokens of a budget; their work runs when the tokens exist

/** llm sends requests that reserve tokens of llmTokens, and runs their jobs when their time comes. */
export async function llm(ctx: RunContext): Promise<ScenarioResult> {
  const run = new Run(ctx, "llm");
  const config = named("llmTokens");
  const limit = limitOf(config);
  const end = T0 + minutesFor("llm", ctx.opts) * MINUTE;
  const random = seededRandom(streamSeed(ctx.opts.seed, "llm"));
  const requests: { at: number; tokens: number; ok: boolean; runAfter?: number; jobId?: Id<"llmJobs"> }[] = [];
  const marks: Mark[] = [];
  const points: Point[] = [];

  arrivals(T0, end, () => ctx.opts.requests / MINUTE, random).forEach((arrival, i) => {
    // 1k to 15k tokens, in hundreds.
    const tokens = 1000 + Math.floor(random() * 141) * 100;
    run.timeline.at(arrival, async () => {
      // Each request from its own user, so only the budget refuses (each user may send 20 an hour).
      const user = signedIn(`visitor${i + 1}`);
      const at = await run.now();
      const r = await run.call((t) => t.withIdentity(user).mutation(api.llm.request, { prompt: `request ${i + 1}`, tokens }));
      if (r.ok) {
        requests.push({ at, tokens, ok: true, runAfter: r.runAfter, jobId: r.jobId });
        marks.push({ at, kind: r.runAfter === 0 ? "admitted" : "reserved" });
      } else {
        requests.push({ at, tokens, ok: false });
        marks.push({ at, kind: "refused" });
      }
    });
  });
  const sample = async () => {
    const at = await run.now();
    const v = await run.call((t) => t.run((c) => rateLimiter.getValue(c, "llmTokens")));
    points.push({ at, value: available(v, at) });
  };
  const every = (end - T0) / SAMPLES;
  for (let k = 0; k <= SAMPLES; k++) run.timeline.at(T0 + Math.round(k * every), sample);
  await run.timeline.runUntil(end);
  // The queue outlives the traffic: keep sampling, stepping job by job, until every job has run.
  let at = end;
  while (ctx.clock.countTimers() > 0) {
    at += every;
    await run.advanceTo(Math.round(at));
    await sample();
  }
  const chartEnd = Date.now();

  const jobs = await run.call((t) => t.run((c) => c.db.query("llmJobs").collect()));
  const byId = new Map(jobs.map((j) => [j._id, j]));
  for (const j of jobs) if (j.ranAt !== undefined) marks.push({ at: j.ranAt, kind: "ran" });
  const accepted = requests.filter((r) => r.ok);
  const reserved = accepted.filter((r) => (r.runAfter ?? 0) > 0);
  const refused = requests.filter((r) => !r.ok);
  const tokens = (rs: readonly { tokens: number }[]) => num(rs.reduce((s, r) => s + r.tokens, 0));
  // What the server decided, with the wait it promised (notBefore − requestedAt), for the replay.
  const actual: Decision[] = requests.map((r) => {
    const job = r.jobId === undefined ? undefined : byId.get(r.jobId);
    if (!r.ok || job === undefined) return { at: r.at, count: r.tokens, ok: r.ok };
    const wait = job.notBefore - job.requestedAt;
    return wait > 0 ? { at: r.at, count: r.tokens, ok: true, retryAfter: wait } : { at: r.at, count: r.tokens, ok: true };
  });
  const replayed = replay(actual, config, { reserve: true });
  const tm = timing(jobs, JITTER_MS);
  const runs: Taken[] = jobs.flatMap((j) => (j.ranAt === undefined ? [] : [{ at: j.ranAt, count: j.tokens }]));
  const promised: Taken[] = jobs.map((j) => ({ at: j.notBefore, count: j.tokens }));
  const lastRun = Math.max(T0, ...runs.map((r) => r.at));
  const bound = ceiling(limit, T0, lastRun);
  const ran = runs.reduce((s, r) => s + r.count, 0);
  const deepest = Math.min(...points.map((p) => p.value));
  const maxReserved = config.maxReserved ?? Infinity;
  const summary: SummaryRow[] = [
    { label: "limit", value: "llmTokens", note: describe(config) },
    { label: "requests", value: num(requests.length), note: `${tokens(requests)} tokens; about ${num(ctx.opts.requests, Number.isInteger(ctx.opts.requests) ? 0 : 1)} a minute for ${duration(end - T0)}, 1k to 15k tokens each` },
    { label: "run now", value: num(accepted.length - reserved.length), note: `${tokens(accepted.filter((r) => (r.runAfter ?? 0) === 0))} tokens` },
    { label: "reserved", value: num(reserved.length), note: `${tokens(reserved)} tokens, work scheduled for when they exist` },
    {
      label: "refused",
      value: num(refused.length),
      note: refused.length === 0 ? "the queue never filled" : `${tokens(refused)} tokens: the queue was full (max reserved)`,
    },
    { label: "waits", value: waits(reserved.map((r) => r.runAfter ?? 0)), note: "runAfter of reserved requests (retryAfter + jitter)" },
    { label: "ran late by", value: waits(jobs.flatMap((j) => (j.ranAt === undefined ? [] : [j.ranAt - j.notBefore]))), note: `after the promised instant; the jitter is up to ${duration(JITTER_MS)}` },
    { label: "deepest queue", value: `${num(Math.max(0, -deepest))} tokens`, note: `sampled; at most ${num(maxReserved)} may be reserved` },
    { label: "budget used", value: pct(ran / bound), note: `${num(ran)} tokens run of ${num(bound)} = capacity + rate x time to the last run` },
  ];
  const checks: Check[] = [
    { name: "every reserved job ran", ok: tm.missing === 0, detail: `${num(tm.jobs - tm.missing)} of ${num(tm.jobs)} jobs` },
    { name: "no job ran before its promised instant", ok: tm.early === 0, detail: tm.early === 0 ? "none early" : `${tm.early} early` },
    {
      name: `every job ran within the jitter (${duration(JITTER_MS)}) of its promise`,
      ok: tm.late === 0,
      detail: tm.jobs === tm.missing ? "no job ran" : `latest ${duration(tm.worstDelay)} after; ${tm.late} beyond`,
    },
    boundCheck("the promised schedule never exceeds the budget", worstExcess(promised, limit)),
    boundCheck("the actual runs never exceed it by more than the jitter allows", worstExcess(runs, limit, JITTER_MS)),
    {
      name: "the queue never went deeper than max reserved (sampled)",
      ok: deepest >= -maxReserved - EPSILON,
      detail: `deepest ${num(Math.max(0, -deepest))} of ${num(maxReserved)}`,
    },
    agreementCheck(actual, replayed),
  ];
  return {
    id: "llm",
    title: "LLM requests reserve a token budget; the work runs when promised",
    about: [
      `Requests of 1k to 15k tokens arrive through llm.request, each from its own signed-in user, at about ${num(ctx.opts.requests, Number.isInteger(ctx.opts.requests) ? 0 : 1)} a minute for ${duration(end - T0)}, about ${num((ctx.opts.requests * 8_000) / config.rate, 1)}x the budget on average. Each reserves its tokens (reserve: true) and schedules llm.generate for when they exist, plus up to ${duration(JITTER_MS)} of jitter. The clock steps timer by timer, so each job runs at its own instant and stamps ranAt.`,
    ],
    chart: {
      title: "tokens of llmTokens (below 0: reserved ahead)",
      start: T0,
      end: chartEnd,
      points,
      capacity: limit.capacity,
      floor: -maxReserved,
      marks,
    },
    summary,
    checks,
    calls: run.calls,
    wallMs: run.wallMs,
  };
}

// ---------------------------------------------------------------------------------------------
// 4. api: a hot sharded limit under a load peak

/** apiCalls puts a load peak on the sharded apiCalls limit, counting the rows each call touches. */
export async function apiCalls(ctx: RunContext): Promise<ScenarioResult> {
  const run = new Run(ctx, "api");
  const config = named("apiCalls");
  const limit = limitOf(config);
  const duration_ = minutesFor("api", ctx.opts) * MINUTE;
  const end = T0 + duration_;
  const base = 0.5;
  const peak = ctx.opts.load;
  const peakFrom = T0 + duration_ / 4;
  const peakTo = T0 + (3 * duration_) / 4;
  const perMs = (t: number) => ((t >= peakFrom && t < peakTo ? peak : base) * limit.rate) / limit.period;
  const times = arrivals(T0, end, perMs, seededRandom(streamSeed(ctx.opts.seed, "api")));
  const calls: { at: number; ok: boolean; retryAfter?: number; read: number; written: number }[] = [];
  const marks: Mark[] = [];
  const points: Point[] = [];

  for (const arrival of times) {
    run.timeline.at(arrival, async () => {
      const at = await run.now();
      // The app's own mutation, called from a wrapper that reads the transaction's metrics around it.
      const m = await run.call((t) =>
        t.run(async (c) => {
          const before = await c.meta.getTransactionMetrics();
          let ok = true;
          let retryAfter: number | undefined;
          try {
            await c.runMutation(api.apiCalls.call, {});
          } catch (e) {
            if (!isRateLimitError(e)) throw e;
            ok = false;
            retryAfter = e.data.retryAfter;
          }
          const after = await c.meta.getTransactionMetrics();
          return {
            ok,
            retryAfter,
            read: after.documentsRead.used - before.documentsRead.used,
            written: after.documentsWritten.used - before.documentsWritten.used,
          };
        }),
      );
      calls.push({ at, ...m });
      marks.push({ at, kind: m.ok ? "admitted" : "refused" });
    });
  }
  run.sampleEvenly(T0, end, points, async () => {
    const v = await run.call((t) => t.run((c) => rateLimiter.getValue(c, "apiCalls", { sampleShards: config.shards, details: true })));
    return available(v, Date.now());
  });
  await run.timeline.runUntil(end);
  await run.drain();

  const admitted = calls.filter((c) => c.ok);
  const refused = calls.filter((c) => !c.ok);
  const { shards: _shards, ...unsharded } = config;
  const ideal = replay(times.map((at) => ({ at, count: 1 })), unsharded).filter((d) => d.ok).length;
  const bound = ceiling(limit, T0, end);
  const inPeak = admitted.filter((c) => c.at >= peakFrom && c.at < peakTo).length;
  const peakRate = (inPeak / (peakTo - peakFrom)) * limit.period;
  // convex-test counts one extra document read for each patch; written documents are patches
  // (but for each shard's first insert), so read − written is about the shard rows read.
  const rows = calls.map((c) => c.read - c.written);
  const twoReads = rows.filter((r) => r >= 2).length;
  const summary: SummaryRow[] = [
    { label: "limit", value: "apiCalls", note: `${describe(config)}; global` },
    {
      label: "demand",
      value: `${num(calls.length)} calls`,
      note: `${base}x the rate, then ${peak}x from ${duration(peakFrom - T0)} to ${duration(peakTo - T0)}, then ${base}x again`,
    },
    { label: "admitted", value: num(admitted.length), note: pct(admitted.length / Math.max(1, calls.length)) },
    { label: "refused", value: num(refused.length) },
    { label: "in the peak", value: `${num(peakRate, 1)} per ${duration(limit.period)}`, note: `admitted while demand was ${peak}x the rate of ${num(limit.rate)}, with what the bucket saved before` },
    { label: "vs exact", value: pct(admitted.length / Math.max(1, ideal)), note: `admitted / what one exact unsharded row admits for the same calls (${num(ideal)})` },
    { label: "vs ceiling", value: pct(admitted.length / bound), note: `of ${num(bound)} = capacity + rate x time` },
    {
      label: "rows read",
      value: `${num(spread(rows).mean, 2)} per call`,
      note: `shard rows; ${pct(twoReads / Math.max(1, calls.length))} of calls read a second shard (the first was low)`,
    },
    { label: "rows written", value: `${num(spread(calls.map((c) => c.written)).mean, 2)} per call`, note: "from ctx.meta.getTransactionMetrics()" },
    { label: "refusal waits", value: waits(refused.map((c) => c.retryAfter ?? 0)), note: "retryAfter from the shards read" },
  ];
  const checks: Check[] = [boundCheck("never over capacity + rate x time, in any interval, across all shards", worstExcess(admitted.map((c) => ({ at: c.at, count: 1 })), limit))];
  return {
    id: "api",
    title: `a hot limit over ${config.shards ?? 1} shards under a load peak`,
    about: [
      `Calls to apiCalls.call (Poisson arrivals) at half the limit's rate, then ${peak}x it for the middle half of ${duration(duration_)}, then half again. Each call runs in a wrapper that reads the transaction's metrics, to count the shard rows it touched.`,
    ],
    chart: { title: "tokens of apiCalls (all shards together)", start: T0, end, points, capacity: limit.capacity, marks },
    summary,
    checks,
    calls: run.calls,
    wallMs: run.wallMs,
  };
}

// ---------------------------------------------------------------------------------------------
// 5. seam: bursts at the turn of the hour, against an exact and an approximate sliding window, a
// fixed window and a bucket

/**
 * The limits the seam scenario compares, in the order their charts are drawn: "sliding window" is
 * the app's own (exact), "approximate" the same with `exact: false`.
 */
const SEAM_KINDS = ["fixed window", "sliding window", "approximate", "token bucket"] as const;
type SeamKind = (typeof SEAM_KINDS)[number];

/**
 * How long each half of a seam burst lasts, ms. Under W / N (36 s for 100 an hour): within it, a
 * sliding window whose window before took N frees no whole token, so the half after the turn is
 * refused entirely. (Traffic later in that hour is another matter: see the steady-traffic row.)
 */
const SEAM_SPAN = 30 * SECOND;

/** One limit's run on the shared arrivals: its decisions (in order), marks and samples. */
type SeamLane = {
  kind: SeamKind;
  config: RateLimitConfig;
  decisions: Decision[];
  marks: Mark[];
  points: Point[];
  /** The last `getValue` read (a fixed window's `ts` is the start of its window). */
  last?: GetValueReturns;
  run: Run;
};

/**
 * `config` with its windows starting at `phase` (ms), as the server resolved them; a token bucket
 * and an exact sliding window have none.
 */
function withPhase(config: RateLimitConfig, phase: number): RateLimitConfig {
  if (config.kind === "token bucket" || (config.kind === "sliding window" && config.exact !== false)) return config;
  return { ...config, start: phase };
}

/** The instants admitted, in order. */
function admittedTimes(decisions: readonly Decision[]): number[] {
  return decisions.filter((d) => d.ok).map((d) => d.at);
}

/** The most admitted in one window of `limit`'s aligned windows. */
function worstAligned(times: readonly number[], limit: { phase: number; period: number }): number {
  const per = new Map<number, number>();
  for (const t of times) {
    const k = windowIndex(t, limit);
    per.set(k, (per.get(k) ?? 0) + 1);
  }
  return Math.max(0, ...per.values());
}

/**
 * seam sends emails in bursts at the turn of the hour through outboundEmails (an exact sliding
 * window, as limits.ts declares it), and the same arrivals through the same 100 an hour declared
 * as an approximate sliding window, a fixed window and a token bucket, each on a fresh app: what
 * each lets out in the worst hour.
 */
export async function seam(ctx: RunContext): Promise<ScenarioResult> {
  // Real time for the whole scenario: its four lanes run one after another, but each Run's clock
  // (wallMs) runs from its creation to when it is read, so summing them would count time twice.
  const started = performance.now();
  const declared = named("outboundEmails");
  if (declared.kind !== "sliding window" || declared.exact === false) throw new Error("outboundEmails is expected to be an exact sliding window");
  const { rate: n, period: w } = declared;
  const configs: Record<SeamKind, RateLimitConfig> = {
    "fixed window": { kind: "fixed window", rate: n, period: w },
    "sliding window": declared,
    approximate: { ...declared, exact: false },
    "token bucket": { kind: "token bucket", rate: n, period: w },
  };
  // The hours turn at a phase hashed from the limit's name: the same for the approximate window's
  // two counting windows, so those kinds' windows turn together (the exact window has none). Read
  // from the app, before any traffic.
  const first = new Run(ctx, "seam/sliding window");
  const fixedLimiter = new RateLimiter(components.rateLimiter, { outboundEmails: configs["fixed window"] });
  const phase = (await first.call((t) => t.run((c) => fixedLimiter.getValue(c, "outboundEmails")))).config.start ?? 0;
  const minutes = minutesFor("seam", ctx.opts);
  const turnAfter = (t: number) => phase + (Math.floor((t - phase) / w) + 1) * w;
  // A burst at every other turn from 20 min in, each with 20 min after it.
  const turns: number[] = [];
  for (let turn = turnAfter(T0 + 20 * MINUTE); turn + 20 * MINUTE <= T0 + minutes * MINUTE; turn += 2 * w) turns.push(turn);
  if (turns.length === 0) turns.push(turnAfter(T0 + SEAM_SPAN)); // --minutes too short: one anyway
  const end = Math.max(T0 + minutes * MINUTE, turns[turns.length - 1]! + 20 * MINUTE);
  // More than N on each side of the turn, so that every limit refuses some of each half.
  const burst = Math.round(1.2 * n);
  const times = turns.flatMap((turn) =>
    Array.from({ length: 2 * burst }, (_, i) =>
      i < burst ? turn - SEAM_SPAN + Math.floor((i * SEAM_SPAN) / burst) : turn + Math.floor(((i - burst) * SEAM_SPAN) / burst),
    ),
  );

  const lanes: SeamLane[] = [];
  // The sliding window first, on the app that was read: each Run starts the clock at T0 anew.
  for (const kind of ["sliding window", "approximate", "fixed window", "token bucket"] as const) {
    const run = kind === "sliding window" ? first : new Run(ctx, `seam/${kind}`);
    const config = configs[kind];
    // The sliding window is the app's own limit; the others are the same name under another kind.
    const limiter = kind === "sliding window" ? undefined : new RateLimiter(components.rateLimiter, { outboundEmails: config });
    const take = (c: Parameters<typeof rateLimiter.limit>[0]) =>
      limiter === undefined ? rateLimiter.limit(c, "outboundEmails") : limiter.limit(c, "outboundEmails");
    const read = (c: Parameters<typeof rateLimiter.getValue>[0]) =>
      limiter === undefined ? rateLimiter.getValue(c, "outboundEmails") : limiter.getValue(c, "outboundEmails");
    const lane: SeamLane = { kind, config, decisions: [], marks: [], points: [], run };
    for (const arrival of times) {
      run.timeline.at(arrival, async () => {
        const at = await run.now();
        const r = await run.call((t) => t.run((c) => take(c)));
        lane.decisions.push(r.ok ? { at, count: 1, ok: true } : { at, count: 1, ok: false, retryAfter: r.retryAfter });
        lane.marks.push({ at, kind: r.ok ? "admitted" : "refused" });
      });
    }
    // Three charts: fewer samples each with --fast, where the run is shorter too.
    const samples = ctx.opts.fast ? SAMPLES / 2 : SAMPLES;
    const sample = async () => {
      lane.last = await run.call((t) => t.run((c) => read(c)));
      return available(lane.last, Date.now());
    };
    run.sampleEvenly(T0, end, lane.points, sample, samples);
    await run.timeline.runUntil(end);
    await run.drain();
    lanes.push(lane);
  }

  const lane = (kind: SeamKind) => lanes.find((l) => l.kind === kind)!;
  const worst = (kind: SeamKind) => maxInWindow(admittedTimes(lane(kind).decisions), w);
  const windows = { phase, period: w };
  const replayed = lanes.map((l) => ({ l, expected: replay(l.decisions, withPhase(l.config, phase)) }));
  const agreement = replayed.map(({ l, expected }) => ({ kind: l.kind, diff: disagreements(l.decisions, expected) }));
  // The same bursts on steady traffic, replayed with the component's own algebra (agreement above).
  const random = seededRandom(streamSeed(ctx.opts.seed, "seam"));
  const background = arrivals(T0, end, () => (0.5 * n) / w, random);
  const steady = [...times, ...background].sort((a, b) => a - b).map((at) => ({ at, count: 1 }));
  const steadyWorst = (kind: SeamKind) =>
    maxInWindow(admittedTimes(replay(steady, withPhase(configs[kind], phase))), w);
  const short: Record<SeamKind, string> = { "fixed window": "fixed", "sliding window": "exact", approximate: "approximate", "token bucket": "bucket" };
  const figures = (f: (kind: SeamKind) => number) => SEAM_KINDS.map((k) => `${short[k]} ${num(f(k))}`).join(" · ");
  const fixedTs = lane("fixed window").last?.ts;
  const fixedMinute = maxInWindow(admittedTimes(lane("fixed window").decisions), 2 * SEAM_SPAN);
  // The period in words: "hour" for the app's limit.
  const hour = w === HOUR ? "hour" : duration(w);
  const summary: SummaryRow[] = [
    { label: "limit", value: "outboundEmails", note: `${describe(declared)} (limits.ts); beside it the same ${num(n)} per ${hour} as an approximate sliding window (exact: false), a fixed window and a token bucket (capacity ${num(n)}), each on a fresh app` },
    { label: "hours turn", value: `:${clockTime(phase).slice(3)} past`, note: "a phase hashed from the limit's name, the fixed and the approximate windows' (the exact one has no windows to turn)" },
    {
      label: "arrivals",
      value: `${num(times.length)} emails`,
      note: `${num(burst)} in the ${duration(SEAM_SPAN)} before ${turns.length === 1 ? "a turn of the hour" : `each of ${turns.length} turns of the hour (every other one)`} and ${num(burst)} in the ${duration(SEAM_SPAN)} after, nothing in between; the same for each limit`,
    },
    { label: "worst hour, fixed", value: num(worst("fixed window")), note: `most let out in any ${hour}, not only aligned ones: ${num(fixedMinute)} within ${duration(2 * SEAM_SPAN)} of a turn, ${num(n)} before it and ${num(fixedMinute - n)} more after` },
    { label: "worst hour, exact", value: num(worst("sliding window")), note: `each email's slot comes back an ${hour} after it was sent, so no ${hour} ever holds more than ${num(n)}` },
    { label: "worst hour, approximate", value: num(worst("approximate")), note: `after the turn the hour before still counts, weighted by how much of it the last ${hour} covers: one email back every ${duration(w / n)}` },
    { label: "worst hour, bucket", value: num(worst("token bucket")), note: `its ${num(n)}, then what it refills (${num(n)} per ${hour})` },
    { label: "admitted", value: figures((k) => admittedTimes(lane(k).decisions).length), note: `of ${num(times.length)} each` },
    {
      label: "steady traffic",
      value: figures(steadyWorst),
      note: `worst ${hour} with the same bursts on Poisson arrivals at ${num(0.5 * n)} per ${hour} (${num(background.length)} more), replayed with decideRateLimit: between bursts the approximate window counts the hour before as if spread evenly, so its worst hour can pass N, never 2N; the exact one never passes N`,
    },
  ];
  const checks: Check[] = [
    {
      name: "the fixed window lets more than N out in an hour (the seam)",
      ok: worst("fixed window") > n,
      detail: `${num(worst("fixed window"))} in its worst ${hour}, ${num(fixedMinute)} of them within ${duration(2 * SEAM_SPAN)}`,
    },
    {
      name: "the exact sliding window lets at most N out in any hour",
      ok: worst("sliding window") <= n,
      detail: `${num(worst("sliding window"))} in its worst ${hour}, N = ${num(n)}`,
    },
    {
      name: "the approximate sliding window lets at most N out in every aligned hour",
      ok: worstAligned(admittedTimes(lane("approximate").decisions), windows) <= n,
      detail: `at most ${num(worstAligned(admittedTimes(lane("approximate").decisions), windows))}`,
    },
    boundCheck(
      "the token bucket is never over capacity + rate x time",
      worstExcess(admittedTimes(lane("token bucket").decisions).map((at) => ({ at, count: 1 })), limitOf(configs["token bucket"])),
    ),
    {
      name: "the fixed window's hours turn with the approximate window's (one phase, hashed from the name)",
      ok: fixedTs !== undefined && (((fixedTs - phase) % w) + w) % w === 0,
      detail: fixedTs === undefined ? "no fixed window read" : `its last window opened at ${clockTime(fixedTs)}, the approximate window's hours turn at :${clockTime(phase).slice(3)}`,
    },
    {
      name: "every limit decided exactly as decideRateLimit predicts",
      ok: agreement.every((a) => a.diff.length === 0),
      detail: agreement.map((a) => (a.diff.length === 0 ? `${a.kind}: ${num(times.length)} decisions` : `${a.kind}: ${a.diff.join("; ")}`)).join("; "),
    },
    {
      name: "with steady traffic the exact sliding window still lets at most N out in any hour",
      ok: steadyWorst("sliding window") <= n,
      detail: `${num(steadyWorst("sliding window"))} in its worst ${hour} (replayed), N = ${num(n)}`,
    },
    {
      name: "with steady traffic the approximate sliding window stays under 2N in any hour (its bound)",
      ok: steadyWorst("approximate") < 2 * n,
      detail: `${num(steadyWorst("approximate"))} in its worst ${hour} (replayed), 2N = ${num(2 * n)}`,
    },
  ];
  const chart = (l: SeamLane): ChartData => ({
    title: `tokens of outboundEmails (${l.kind === "sliding window" ? "exact sliding window" : l.kind === "approximate" ? "approximate sliding window" : l.kind})`,
    start: T0,
    end,
    points: l.points,
    capacity: n,
    marks: l.marks,
  });
  return {
    id: "seam",
    title: "a burst at the turn of the hour, under four kinds of limit",
    about: [
      `Emails go out through outboundEmails, the email provider's limit of ${num(n)} in any hour, which limits.ts declares as an exact sliding window. A job sends in bursts around the turn of the hour: ${num(burst)} emails in the ${duration(SEAM_SPAN)} before it and ${num(burst)} in the ${duration(SEAM_SPAN)} after. The same arrivals run through the component's limit against the exact sliding window and against the same ${num(n)} an hour declared as an approximate sliding window (exact: false), a fixed window and a token bucket, each on a fresh app.`,
      `The fixed window refills all at once when its hour turns: ${num(n)} just before and ${num(n)} more just after, twice what the provider allows in an hour. The exact sliding window keeps a log of what it let out in the last hour: each email's slot comes back an hour after it was sent, so the burst after the turn is refused and no hour ever holds more than ${num(n)}, whatever the traffic. The approximate one still counts the hour before after the turn, weighted by how much of it the last hour covers, so emails come back gradually (one every ${duration(w / n)}). Its weighting assumes the hour before was spread evenly: with steady traffic between the bursts, what comes back early is let out while the burst is still inside the hour, so some hour can hold more than ${num(n)} (see "steady traffic"), never ${num(2 * n)}. The token bucket stops at ${num(n)} too, then lets out what it refills.`,
    ],
    chart: chart(lane("fixed window")),
    alongside: [chart(lane("sliding window")), chart(lane("approximate")), chart(lane("token bucket"))],
    summary,
    checks,
    calls: lanes.reduce((sum, l) => sum + l.run.calls, 0),
    wallMs: performance.now() - started,
  };
}

// ---------------------------------------------------------------------------------------------
// 6. generations: at most 2 LLM generations in flight per user; a crashed one's slot frees itself

/** The error generations.generate throws for a generation started with `crash: true`. */
const GENERATION_CRASH = "the generation crashed";

/** How often the user tries to start a generation, ms. */
const GENERATION_EVERY = 10 * SECOND;
/** After the scripted start, the share of generations that crash (seeded). */
const CRASH_RATE = 0.25;

/**
 * generations has one user start an LLM generation every 10 s through generations.start (a
 * concurrency limit, llmGenerations: 2 in flight, 2-minute leases). The first crashes before it
 * can release, and so does the third; the slot of the first must stay held until exactly its
 * lease's expiry and free itself then, with no job: probes at expiry − 1 ms and at expiry say so.
 */
export async function generations(ctx: RunContext): Promise<ScenarioResult> {
  const run = new Run(ctx, "generations");
  const config = rateLimiter.limits?.llmGenerations;
  if (config?.kind !== "concurrency") throw new Error("limits.ts has no concurrency limit llmGenerations");
  const user = "ada";
  // Long enough for the first crashed lease to expire and a minute more.
  const end = T0 + Math.max(minutesFor("generations", ctx.opts) * MINUTE, config.lease + MINUTE);
  const random = seededRandom(streamSeed(ctx.opts.seed, "generations"));
  const expiry = T0 + config.lease; // the first generation's lease, which crashes
  type Attempt = LeaseDecision & { crash: boolean; id?: Id<"generations"> };
  const attempts: Attempt[] = [];
  const marks: Mark[] = [];
  const points: Point[] = [];

  const attempt = (scheduled: number, crash: boolean) =>
    run.timeline.at(scheduled, async () => {
      const at = await run.now();
      // What the limit holds just before, read through the app's query (at the same instant: a query
      // commits nothing): the model of the decision.
      const before = await run.call((t) => t.query(api.generations.inFlight, { user }));
      const r = await run.call((t) => t.mutation(api.generations.start, { user, prompt: `at ${clockTime(at)}`, crash }));
      const base = { at, crash, held: before.inFlight, ...(before.earliestExpiry === undefined ? {} : { earliest: before.earliestExpiry }) };
      attempts.push(r.ok ? { ...base, ok: true, id: r.id } : { ...base, ok: false, retryAfter: r.retryAfter });
      marks.push({ at, kind: r.ok ? "admitted" : "refused" });
    });
  for (let at = T0; at < end; at += GENERATION_EVERY) {
    // Scripted first: the 1st and 3rd crash; later ones crash now and then.
    const crash = at === T0 || at === T0 + 2 * GENERATION_EVERY || (at >= expiry && random() < CRASH_RATE);
    attempt(at, crash);
  }
  attempt(expiry - 1, false);
  run.sampleEvenly(T0, end, points, async () => {
    const v = await run.call((t) => t.query(api.generations.inFlight, { user }));
    return v.capacity - v.inFlight;
  });
  // The crashes are on purpose: convex-test reports each scheduled run that throws, with its stack
  // trace, on stderr; they are counted instead, and the summary says so in one line.
  const { crashes } = await quietCrashes("generations:generate", GENERATION_CRASH, async () => {
    await run.timeline.runUntil(end);
    await run.drain();
  });

  const rows = await run.call((t) => t.run((c) => c.db.query("generations").collect()));
  for (const g of rows) if (g.finishedAt !== undefined) marks.push({ at: g.finishedAt, kind: "ran" });
  attempts.sort((a, b) => a.at - b.at);
  const admitted = attempts.filter((a) => a.ok);
  const refused = attempts.filter((a) => !a.ok);
  const crashed = admitted.filter((a) => a.crash);
  // Each admitted generation holds its slot until it finished, or (crashed) until its lease expired.
  const byId = new Map(rows.map((g) => [g._id, g]));
  const held = heldAtOnce(admitted.map((a) => ({ from: a.at, to: (a.id && byId.get(a.id)?.finishedAt) ?? a.at + config.lease })));
  const wrong = leaseDisagreements(attempts, config.capacity);
  const probe = attempts.find((a) => a.at === expiry - 1);
  const atExpiry = attempts.find((a) => a.at === expiry);
  const summary: SummaryRow[] = [
    { label: "limit", value: "llmGenerations", note: `concurrency, ${num(config.capacity)} in flight per user, leases of ${duration(config.lease)}` },
    { label: "attempts", value: num(attempts.length), note: `one every ${duration(GENERATION_EVERY)} for ${duration(end - T0)}, and a probe 1 ms before the first lease expires` },
    { label: "admitted", value: num(admitted.length), note: `${num(crashed.length)} crashed before releasing; the rest released when they finished` },
    { label: "refused", value: num(refused.length), note: "both slots held" },
    { label: "refusal waits", value: waits(refused.map((a) => a.retryAfter ?? 0)), note: "retryAfter: until the earliest lease expires" },
    { label: "first crash", value: clockTime(T0), note: `its slot freed at ${clockTime(expiry)}, exactly its lease's expiry, with no job` },
    {
      label: "crashes",
      value: num(crashes),
      note: `on purpose: generations.generate threw "${GENERATION_CRASH}" for each generation started with crash: true; convex-test's error report for each is left out of the output`,
    },
  ];
  const checks: Check[] = [
    {
      name: "the crashed generation held its slot until its lease expired, and freed it exactly then",
      ok: probe?.ok === false && probe.retryAfter === 1 && atExpiry?.ok === true,
      detail:
        probe === undefined || atExpiry === undefined
          ? "the probes did not run"
          : `at expiry − 1 ms: ${probe.ok ? "admitted" : `refused, retryAfter ${num(probe.retryAfter ?? 0)} ms`}; at expiry: ${atExpiry.ok ? "admitted" : "refused"}`,
    },
    {
      name: "the generations that crashed were the ones started to crash, and nothing else failed",
      ok: crashes === crashed.length,
      detail: `${num(crashes)} crashes reported, ${num(crashed.length)} generations admitted with crash: true`,
    },
    {
      name: `never more than ${num(config.capacity)} generations held a slot at once`,
      ok: held <= config.capacity,
      detail: `at most ${num(held)} at once, counting a crashed one until its lease expired`,
    },
    {
      name: "every decision is the lease model's: a slot while one is free, else wait for the earliest expiry",
      ok: wrong.length === 0,
      detail: wrong.length === 0 ? `${num(attempts.length)} decisions` : wrong.join("; "),
    },
    {
      name: "every generation that did not crash finished and released its slot",
      ok: rows.filter((g) => g.finishedAt === undefined).length === crashed.length,
      detail: `${num(rows.length - crashed.length)} finished, ${num(crashed.length)} crashed`,
    },
  ];
  return {
    id: "generations",
    title: "generations: at most 2 in flight per user; a crash frees its slot at its lease's expiry",
    about: [
      `${user} starts an LLM generation through generations.start every ${duration(GENERATION_EVERY)} for ${duration(end - T0)}: a concurrency limit (llmGenerations) takes a slot in the mutation, and the action releases it when it finishes. The first generation crashes at ${clockTime(T0)} and the third at ${clockTime(T0 + 2 * GENERATION_EVERY)}, before they can release; later ones crash one time in ${num(1 / CRASH_RATE)}. Nothing frees a crashed slot but its lease's time: attempts are refused, with retryAfter until the earliest lease expires, and at ${clockTime(expiry)} the first slot is free again.`,
    ],
    chart: { title: `free slots of llmGenerations for ${user}`, axis: "free slots", start: T0, end, points, capacity: config.capacity, marks },
    summary,
    checks,
    calls: run.calls,
    wallMs: run.wallMs,
  };
}

// ---------------------------------------------------------------------------------------------
// 7. overrides: a pro tier set mid-run, a brute force locked out, and an admin's block

/** How often each LLM user sends a burst, how many requests it holds, and how far apart, ms. */
const BURST_EVERY = 3 * MINUTE;
const BURST_SIZE = 15;
const BURST_GAP = 2 * SECOND;
/** The admin sets the pro tier's override during the third burst, between bob's 6th and 7th requests. */
const OVERRIDE_AT = T0 + 2 * BURST_EVERY + 11 * SECOND;
/** The attacker's guesses: one every 20 s, at carol's account from 1 minute in, then at dave's. */
const GUESS_EVERY = 20 * SECOND;
const ATTACK_FROM = T0 + MINUTE;
const TURN_TO_DAVE = T0 + 6 * MINUTE + 20 * SECOND;
/** The admin blocks dave's sign-ins after the attacker's third guess at them, for an hour. */
const BLOCK_AT = TURN_TO_DAVE + 2 * GUESS_EVERY + 10 * SECOND;
const BLOCK_FOR = HOUR;
/** Carol herself tries to sign in during the lock. */
const CAROL_TRIES = T0 + 5 * MINUTE + 30 * SECOND;

/** The least simulated minutes the overrides scenario runs for. */
const OVERRIDES_MINUTES = 12;

/** One sign-in attempt: at which account, whether the limit let the password be checked, and the wait it answered. */
type Attempt = { at: number; account: string; passed: boolean; retryAfter?: number };

/**
 * overrides runs limits as data through the app's own functions: a free user (alice) and a pro
 * user (bob) send bursts of LLM requests (llmRequests, 20 an hour per user), and mid-run the admin
 * sets the pro tier's override (admin.seedPlanOverrides: ten times the named config), which takes
 * effect at bob's next request with no tokens granted. Meanwhile an attacker guesses passwords
 * (logins.logIn): carol's account locks for a day after ten wrong guesses (failedLogins' lockout),
 * and the admin blocks dave's sign-ins for an hour (admin.setRateLimitOverride). After the run,
 * probes 1 ms before and at the end of the lock and of the block.
 */
export async function overrides(ctx: RunContext): Promise<ScenarioResult> {
  const run = new Run(ctx, "overrides");
  const free = named("llmRequests");
  const pro: RateLimitConfig = proConfig();
  const logins = named("failedLogins");
  const lockout = logins.lockout ?? 0;
  // Long enough for the override, the block and two bursts after them, whatever --minutes says.
  const end = T0 + Math.max(minutesFor("overrides", ctx.opts), OVERRIDES_MINUTES) * MINUTE;
  const admin = { email: ADMIN_EMAILS[0]! };
  const users = { alice: signedIn("alice"), bob: signedIn("bob") };
  type Lane = { decisions: Decision[]; marks: Mark[]; points: Point[] };
  const lane = (): Lane => ({ decisions: [], marks: [], points: [] });
  const llmLanes = { alice: lane(), bob: lane() };
  const loginLanes = { carol: lane(), dave: lane() };
  const attempts: Attempt[] = [];
  /** bob's allowance read just before and just after the override was set, and his first request after it. */
  let around: { before: GetValueReturns; after: GetValueReturns } | undefined;
  let firstAfter: Decision | undefined;

  await run.call((t) =>
    t.run(async (c) => {
      await c.db.insert("users", { name: "carol", password: "right" });
      await c.db.insert("users", { name: "dave", password: "right" });
    }),
  );
  // Bob is on the pro plan from the start; his requests name the "pro" tier, which has no
  // override until the admin sets it.
  await run.call((t) => t.withIdentity(admin).mutation(api.admin.setPlan, { user: users.bob.tokenIdentifier, plan: "pro" }));

  const ask = async (who: "alice" | "bob") => {
    const at = await run.now();
    const r = await run.call((t) => t.withIdentity(users[who]).mutation(api.llm.request, { prompt: `${who} at ${clockTime(at)}`, tokens: 500 }));
    const d: Decision = r.ok ? { at, count: 1, ok: true } : { at, count: 1, ok: false, retryAfter: r.retryAfter };
    llmLanes[who].decisions.push(d);
    llmLanes[who].marks.push({ at, kind: d.ok ? "admitted" : "refused" });
    if (who === "bob" && at > OVERRIDE_AT && firstAfter === undefined) firstAfter = d;
  };
  for (let burst = T0; burst < end; burst += BURST_EVERY) {
    for (let k = 0; k < BURST_SIZE && burst + k * BURST_GAP < end; k++) {
      const at = burst + k * BURST_GAP;
      run.timeline.at(at, async () => {
        await ask("alice");
        await ask("bob");
      });
    }
  }
  const bobValue = () => run.call((t) => t.run((c) => rateLimiter.getValue(c, "llmRequests", { key: users.bob.tokenIdentifier, tier: "pro" })));
  run.timeline.at(OVERRIDE_AT, async () => {
    const before = await bobValue();
    await run.call((t) => t.mutation(internal.admin.seedPlanOverrides, {}));
    around = { before, after: await bobValue() };
  });

  const logIn = async (account: "carol" | "dave", password: "right" | "wrong") => {
    const laneOf = loginLanes[account];
    const at = await run.now();
    try {
      const r = await run.call((t) => t.mutation(api.logins.logIn, { name: account, password }));
      attempts.push({ at, account, passed: true, ...(!r.ok && r.retryAfter !== undefined ? { retryAfter: r.retryAfter } : {}) });
      laneOf.marks.push({ at, kind: "admitted" });
    } catch (e) {
      if (!isRateLimitError(e)) throw e;
      attempts.push({ at, account, passed: false, retryAfter: e.data.retryAfter });
      laneOf.marks.push({ at, kind: "refused" });
    }
  };
  for (let at = ATTACK_FROM; at < end; at += GUESS_EVERY) {
    const account = at < TURN_TO_DAVE ? "carol" : "dave";
    run.timeline.at(at, () => logIn(account, "wrong"));
  }
  run.timeline.at(CAROL_TRIES, () => logIn("carol", "right"));
  const blockedUntil = BLOCK_AT + BLOCK_FOR;
  run.timeline.at(BLOCK_AT, async () => {
    await run.call((t) =>
      t.withIdentity(admin).mutation(api.admin.setRateLimitOverride, {
        name: "failedLogins",
        target: { key: "dave" },
        override: { blockedUntil },
        note: "brute force from one address",
      }),
    );
  });

  const samples = ctx.opts.fast ? SAMPLES / 4 : SAMPLES / 2;
  const sampleOf = (points: Point[], read: (c: Parameters<typeof rateLimiter.getValue>[0]) => Promise<GetValueReturns>) =>
    run.sampleEvenly(T0, end, points, async () => {
      const at = await run.now();
      return available(await run.call((t) => t.run(read)), at);
    }, samples);
  sampleOf(llmLanes.alice.points, (c) => rateLimiter.getValue(c, "llmRequests", { key: users.alice.tokenIdentifier }));
  sampleOf(llmLanes.bob.points, (c) => rateLimiter.getValue(c, "llmRequests", { key: users.bob.tokenIdentifier, tier: "pro" }));
  sampleOf(loginLanes.carol.points, (c) => rateLimiter.getValue(c, "failedLogins", { key: "carol" }));
  sampleOf(loginLanes.dave.points, (c) => rateLimiter.getValue(c, "failedLogins", { key: "dave" }));
  await run.timeline.runUntil(end);
  await run.drain();

  // What the admin page lists now.
  const listed = async (name: "llmRequests" | "failedLogins") =>
    (await run.call((t) => t.withIdentity(admin).query(api.admin.listRateLimitOverrides, { name, paginationOpts: { numItems: 10, cursor: null } }))).page;
  const overridesNow = [...(await listed("llmRequests")).map((o) => ({ name: "llmRequests", ...o })), ...(await listed("failedLogins")).map((o) => ({ name: "failedLogins", ...o }))];
  const daveRead = await run.now();
  const daveValue = await run.call((t) => t.withIdentity(admin).query(api.admin.rateLimitValue, { name: "failedLogins", key: "dave" }));

  // The lock: it started with the wrong guess that left carol's account less than one guess.
  const atCarol = attempts.filter((a) => a.account === "carol");
  const counted = atCarol.filter((a) => a.passed);
  const locking = counted.find((a) => a.retryAfter === lockout);
  const lockEnd = locking === undefined ? undefined : locking.at + lockout;
  const duringLock = locking === undefined ? [] : atCarol.filter((a) => a.at > locking.at && a.at < locking.at + lockout);
  const atDave = attempts.filter((a) => a.account === "dave");
  const duringBlock = atDave.filter((a) => a.at >= BLOCK_AT && a.at < blockedUntil);
  // Dave's guesses as the limit should have counted them: those before the block, none after.
  let daveState: RateLimitState | null = null;
  for (const a of atDave.filter((a) => a.passed)) {
    const next = calculateRateLimit(daveState, logins, a.at, 1);
    daveState = { value: next.value, ts: next.ts };
  }
  const daveExpected = calculateRateLimit(daveState, logins, daveRead, 0).value;
  // Probes after the run, each 1 ms before and at the end of the block, then of the lock.
  const probe = async (account: "carol" | "dave", at: number) => {
    await run.advanceTo(at);
    // Said if the deployment's clock had moved past the probe's instant (then it proves nothing).
    const late = (await run.now()) - at;
    const prefix = late === 0 ? "" : `${num(late)} ms late: `;
    try {
      const r = await run.call((t) => t.mutation(api.logins.logIn, { name: account, password: "right" }));
      return `${prefix}${r.ok ? "signed in" : "wrong password"}`;
    } catch (e) {
      if (!isRateLimitError(e)) throw e;
      return `${prefix}refused, retryAfter ${num(e.data.retryAfter)} ms`;
    }
  };
  const daveProbes = [await probe("dave", blockedUntil - 1), await probe("dave", blockedUntil)];
  const carolProbes = lockEnd === undefined ? [] : [await probe("carol", lockEnd - 1), await probe("carol", lockEnd)];

  // The pro tier's decisions, replayed: the named config until the override, then the tier's.
  const configAt = (at: number) => (at < OVERRIDE_AT ? free : pro);
  const replayedBob = replay(llmLanes.bob.decisions, configAt);
  const replayedAlice = replay(llmLanes.alice.decisions, free);
  const split = (l: Lane) => ({
    before: l.decisions.filter((d) => d.at < OVERRIDE_AT && d.ok).length,
    after: l.decisions.filter((d) => d.at > OVERRIDE_AT && d.ok).length,
  });
  const alice = split(llmLanes.alice);
  const bob = split(llmLanes.bob);
  const sameBefore = llmLanes.alice.decisions.filter((d) => d.at < OVERRIDE_AT).every((d, i) => {
    const b = llmLanes.bob.decisions[i];
    return b !== undefined && b.ok === d.ok && b.retryAfter === d.retryAfter;
  });
  // Admitted in each burst from the override on (the first one only after it).
  const perBurst = (l: Lane) => {
    const counts = new Map<number, number>();
    for (const d of l.decisions.filter((d) => d.at > OVERRIDE_AT)) {
      const burst = Math.floor((d.at - T0) / BURST_EVERY);
      counts.set(burst, (counts.get(burst) ?? 0) + (d.ok ? 1 : 0));
    }
    return [...counts.values()].join(" | ");
  };
  const freeWait = free.period / free.rate;
  const proWait = pro.period / pro.rate;
  const describeOverride = (o: (typeof overridesNow)[number]) => {
    const target = "tier" in o.target ? `tier ${o.target.tier}` : "network" in o.target ? `network ${o.target.network}` : `key ${o.target.key ?? "(none)"}`;
    const what = "blockedUntil" in o.override ? `blocked until ${clockTime(o.override.blockedUntil)}` : "allow" in o.override ? "allowed" : describe(o.override.config);
    return `${o.name}, ${target}: ${what}${o.note === undefined ? "" : ` ("${o.note}")`}`;
  };
  const summary: SummaryRow[] = [
    { label: "limit", value: "llmRequests", note: `per user: ${describe(free)} (limits.ts); the pro tier's override, ${PRO_MULTIPLIER}x: ${describe(pro)}` },
    { label: "limit", value: "failedLogins", note: `per account: ${describe(logins)}` },
    {
      label: "LLM traffic",
      value: `${num(llmLanes.alice.decisions.length)} each`,
      note: `alice (free) and bob (pro): a burst of ${BURST_SIZE} requests ${duration(BURST_GAP)} apart every ${duration(BURST_EVERY)}`,
    },
    { label: "override set", value: clockTime(OVERRIDE_AT), note: `admin.seedPlanOverrides, during a burst; until then bob's tier had no override and the named config decided` },
    {
      label: "at the override",
      value: around === undefined ? "not read" : `${num(around.before.value, 2)} → ${num(around.after.value, 2)}`,
      note:
        around === undefined
          ? ""
          : `bob's tokens just before and just after (by: ${around.after.by ?? "config"}, capacity ${num(around.after.config.capacity ?? around.after.config.rate)}): no tokens handed out, only his refill since his last take, counted at the pro rate; his next request ${firstAfter === undefined ? "never came" : firstAfter.ok ? "was admitted" : `was refused, retryAfter ${duration(firstAfter.retryAfter ?? 0)} (the pro rate; the free rate's is up to ${duration(freeWait)})`}`,
    },
    { label: "before it", value: `alice ${num(alice.before)}, bob ${num(bob.before)}`, note: "admitted: the same decisions for both, under the named config" },
    {
      label: "after it",
      value: `alice ${num(alice.after)}, bob ${num(bob.after)}`,
      note: `admitted: ${alice.after > 0 ? `${num(bob.after / alice.after, 1)}x` : "alice none"}; per burst bob ${perBurst(llmLanes.bob)}, alice ${perBurst(llmLanes.alice)}: a token back every ${duration(proWait)} for bob, every ${duration(freeWait)} for alice`,
    },
    {
      label: "carol",
      value: locking === undefined ? "never locked" : `locked at ${clockTime(locking.at)}`,
      note:
        locking === undefined
          ? "the attacker's guesses never emptied her allowance"
          : `after ${num(counted.filter((a) => a.at <= locking.at).length)} wrong guesses, until ${new Date(lockEnd!).toISOString().slice(0, 10)} ${clockTime(lockEnd!)} (${duration(lockout)}); then ${num(duringLock.length)} attempts refused, her own right password at ${clockTime(CAROL_TRIES)} too`,
    },
    {
      label: "dave",
      value: `blocked at ${clockTime(BLOCK_AT)}`,
      note: `by an admin (admin.setRateLimitOverride, { blockedUntil }) after ${num(atDave.filter((a) => a.at < BLOCK_AT).length)} wrong guesses, for ${duration(BLOCK_FOR)}: ${num(duringBlock.length)} attempts refused and not counted (${num(daveValue.value, 2)} guesses left at the end, by: ${daveValue.by ?? "config"}, blockedUntil ${daveValue.blockedUntil === undefined ? "none" : clockTime(daveValue.blockedUntil)})`,
    },
    { label: "probes", value: "after the run", note: `dave 1 ms before the block's end: ${daveProbes[0]}; at it: ${daveProbes[1]}. carol 1 ms before the lock's end: ${carolProbes[0] ?? "-"}; at it: ${carolProbes[1] ?? "-"}` },
    { label: "admin listing", value: `${num(overridesNow.length)} overrides`, note: overridesNow.map(describeOverride).join("; ") },
  ];
  const aliceBound = worstExcess(llmLanes.alice.decisions.filter((d) => d.ok), limitOf(free));
  const retryEnds = (as: readonly Attempt[], until: number) => as.every((a) => !a.passed && a.at + (a.retryAfter ?? NaN) === until);
  const checks: Check[] = [
    {
      name: "until the tier's override was set, the pro user was decided by the named config, as the free user",
      ok: sameBefore && alice.before === bob.before,
      detail: `${num(bob.before)} and ${num(alice.before)} admitted, the same decisions request by request`,
    },
    {
      name: "the override took effect at bob's next request and handed out no tokens (less than one: his refill since his last take, at the new rate)",
      ok:
        around !== undefined &&
        around.after.by === "tier" &&
        (around.after.config.capacity ?? around.after.config.rate) === (pro.capacity ?? pro.rate) &&
        around.after.value < 1 &&
        firstAfter !== undefined &&
        !firstAfter.ok &&
        (firstAfter.retryAfter ?? Infinity) <= proWait,
      detail:
        around === undefined || firstAfter === undefined
          ? "not observed"
          : `capacity ${num(around.before.config.capacity ?? around.before.config.rate)} → ${num(around.after.config.capacity ?? around.after.config.rate)} (by: ${around.after.by ?? "config"}), tokens ${num(around.before.value, 2)} → ${num(around.after.value, 2)}; next request ${firstAfter.ok ? "admitted" : `refused, retryAfter ${duration(firstAfter.retryAfter ?? 0)} ≤ ${duration(proWait)}`}`,
    },
    {
      name: `after it, the pro user was admitted ${PRO_MULTIPLIER}x as many as the free user (to within one of the free user's tokens)`,
      ok: Math.abs(bob.after - PRO_MULTIPLIER * alice.after) <= PRO_MULTIPLIER,
      detail: `bob ${num(bob.after)}, alice ${num(alice.after)} x ${PRO_MULTIPLIER} = ${num(PRO_MULTIPLIER * alice.after)}`,
    },
    {
      name: "both users' decisions are calculateRateLimit's, under the config in force at each request",
      ok: disagreements(llmLanes.bob.decisions, replayedBob).length === 0 && disagreements(llmLanes.alice.decisions, replayedAlice).length === 0,
      detail: [...disagreements(llmLanes.bob.decisions, replayedBob), ...disagreements(llmLanes.alice.decisions, replayedAlice)].join("; ") || `${num(llmLanes.bob.decisions.length * 2)} decisions replayed, the override switching bob's config`,
    },
    boundCheck("the free user was never over capacity + rate x time", aliceBound),
    {
      name: `the attacker got ${num(logins.capacity ?? logins.rate)} guesses at carol, and the last of them locked her account for the lockout (${duration(lockout)})`,
      ok: locking !== undefined && counted.filter((a) => a.at <= locking.at).length === (logins.capacity ?? logins.rate),
      detail: locking === undefined ? "never locked" : `the guess at ${clockTime(locking.at)} answered retryAfter ${duration(locking.retryAfter ?? 0)}`,
    },
    {
      name: "every attempt during the lock was refused, with retryAfter to the lock's end exactly",
      ok: lockEnd !== undefined && duringLock.length > 0 && retryEnds(duringLock, lockEnd),
      detail: `${num(duringLock.filter((a) => !a.passed).length)} of ${num(duringLock.length)} refused, her right password too`,
    },
    {
      name: "the lock ends exactly at its end: refused 1 ms before, signed in at it",
      ok: carolProbes[0] === "refused, retryAfter 1 ms" && carolProbes[1] === "signed in",
      detail: `1 ms before: ${carolProbes[0] ?? "-"}; at it: ${carolProbes[1] ?? "-"}`,
    },
    {
      name: "the admin's block refused every attempt at dave until its end, counting none, and lifted exactly then",
      ok:
        duringBlock.length > 0 &&
        retryEnds(duringBlock, blockedUntil) &&
        Math.abs(daveValue.value - daveExpected) <= EPSILON &&
        daveProbes[0] === "refused, retryAfter 1 ms" &&
        daveProbes[1] === "signed in",
      detail: `${num(duringBlock.filter((a) => !a.passed).length)} of ${num(duringBlock.length)} refused, retryAfter to ${clockTime(blockedUntil)}; ${num(daveValue.value, 2)} guesses left at the end, ${num(daveExpected, 2)} from the guesses before the block alone; 1 ms before its end: ${daveProbes[0]}; at it: ${daveProbes[1]}`,
    },
  ];
  const chart = (title: string, l: Lane, capacity: number): ChartData => ({ title, start: T0, end, points: l.points, capacity, marks: l.marks });
  return {
    id: "overrides",
    title: "overrides: a pro tier set mid-run, a lockout, an admin's block",
    about: [
      `Two signed-in users send LLM requests through llm.request, which counts each against the user's own allowance (llmRequests: ${describe(free)}) and names the user's plan as the request's tier: alice is on the free plan, bob on pro. Each sends a burst of ${BURST_SIZE} requests every ${duration(BURST_EVERY)}. At ${clockTime(OVERRIDE_AT)}, in the middle of a burst, the admin runs admin.seedPlanOverrides: the pro tier gets ${PRO_MULTIPLIER}x the named config. It changes no tokens: bob's next request is decided under the tier's terms from the tokens he held, which refill ten times as fast.`,
      `Meanwhile an attacker guesses passwords through logins.logIn, every ${duration(GUESS_EVERY)}: first carol's. failedLogins has a lockout of ${duration(lockout)}: the wrong guess that leaves the account less than one guess locks it, and every attempt until then is refused, whatever tokens come back, carol's own right password too. Then the attacker turns to dave's account, and at ${clockTime(BLOCK_AT)} the admin blocks its sign-ins for ${duration(BLOCK_FOR)} (admin.setRateLimitOverride with blockedUntil, a deny-list entry): refused, and not counted, so dave isn't locked out for a day. After the run the clock jumps to each end: 1 ms before it, refused; at it, the right password signs in.`,
    ],
    // Both users' charts on the named capacity's scale, side by side: bob refills ten times as fast from the override.
    chart: chart(
      `tokens of llmRequests for bob (pro plan: capacity ${num(free.capacity ?? free.rate)}, then ${num(pro.capacity ?? pro.rate)} from the override at ${clockTime(OVERRIDE_AT)})`,
      llmLanes.bob,
      free.capacity ?? free.rate,
    ),
    alongside: [
      chart("tokens of llmRequests for alice (free plan)", llmLanes.alice, free.capacity ?? free.rate),
      chart("tokens of failedLogins for carol (locked: refused whatever the tokens)", loginLanes.carol, logins.capacity ?? logins.rate),
      chart("tokens of failedLogins for dave (blocked by an admin)", loginLanes.dave, logins.capacity ?? logins.rate),
    ],
    summary,
    checks,
    calls: run.calls,
    wallMs: run.wallMs,
  };
}
