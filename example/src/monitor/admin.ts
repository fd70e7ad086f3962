// The admin view's model: the minutes its metrics chart shows, filled in where a minute saw no
// requests, how a key's state and an override read in their tables, and the override a "block
// this key for N minutes" form sets. Pure: instants come in as ms.
import {
  MINUTE,
  type Heat,
  METRICS_BUCKET_MS,
  type KeyStatus,
  type LimitConfig,
  type MetricsResult,
  type OverrideRecord,
  type RateLimitConfig,
} from "convex-rate-limiter";
import { formatDuration, formatTokens } from "./format.js";

/**
 * adminLimits lists the app's named rate limits for the view's choice, those with metrics first
 * (concurrency limits have no keys to list and no metrics).
 */
export function adminLimits(limits: Readonly<Record<string, LimitConfig>>): { name: string; metrics: boolean }[] {
  return Object.entries(limits)
    .flatMap(([name, config]) => (config.kind === "concurrency" ? [] : [{ name, metrics: config.metrics === true }]))
    .sort((a, b) => Number(b.metrics) - Number(a.metrics));
}

/** One minute of the chart: requests admitted, reserved and refused in it. */
export type MinuteCounts = { bucket: number; admitted: number; reserved: number; refused: number };

/**
 * chartSpan returns the `minutes` whole minutes (UTC-aligned) up to and including the one holding
 * `now`: `from` inclusive, `to` exclusive, both ms. It changes only when a new minute starts, so a
 * query keyed on it is not re-run every render.
 */
export function chartSpan(now: number, minutes: number): { from: number; to: number } {
  const to = Math.floor(now / METRICS_BUCKET_MS) * METRICS_BUCKET_MS + METRICS_BUCKET_MS;
  return { from: to - minutes * METRICS_BUCKET_MS, to };
}

/** minuteSeries returns every minute of `metrics`' span, oldest first, with zeros where none was listed. */
export function minuteSeries(metrics: Pick<MetricsResult, "from" | "to" | "buckets">): MinuteCounts[] {
  const byBucket = new Map(metrics.buckets.map((b) => [b.bucket, b]));
  const out: MinuteCounts[] = [];
  for (let bucket = metrics.from; bucket < metrics.to; bucket += METRICS_BUCKET_MS) {
    const b = byBucket.get(bucket);
    out.push({ bucket, admitted: b?.admitted ?? 0, reserved: b?.reserved ?? 0, refused: b?.refused ?? 0 });
  }
  return out;
}

/** The most requests in any one minute of `series` (0 when empty). */
export function busiest(series: readonly MinuteCounts[]): number {
  return Math.max(0, ...series.map((m) => m.admitted + m.reserved + m.refused));
}

/** minuteLabel writes a minute's start as its UTC clock time, "09:05". */
export function minuteLabel(bucket: number): string {
  return new Date(bucket).toISOString().slice(11, 16);
}

/** describeSeries says in one sentence what the chart shows, for screen readers. */
export function describeSeries(series: readonly MinuteCounts[]): string {
  const sum = (f: (m: MinuteCounts) => number) => series.reduce((s, m) => s + f(m), 0);
  const first = series[0];
  const last = series.at(-1);
  if (first === undefined || last === undefined) return "No minutes to show.";
  const span = `${minuteLabel(first.bucket)} to ${minuteLabel(last.bucket + METRICS_BUCKET_MS)} UTC`;
  const total = sum((m) => m.admitted + m.reserved + m.refused);
  if (total === 0) return `No requests from ${span}.`;
  return `From ${span}: ${sum((m) => m.admitted)} requests admitted, ${sum((m) => m.reserved)} reserved and ${sum((m) => m.refused)} refused; at most ${busiest(series)} in one minute.`;
}

/** What a key's row in the admin table says; `blocked` only while a block of the key is in force. */
export type KeyCells = { key: string; tokens: string; full: string; blocked?: string };

/**
 * keyCells writes a key's row: its tokens now and when it is full again, and, given the block in
 * force for it (`until`, ms, from {@link blocksInForce}), "blocked until <time>": a blocked key's
 * tokens may read full while every request of it is refused.
 */
export function keyCells(k: KeyStatus, block?: { until: number; now: number }): KeyCells {
  return {
    key: k.key ?? "(global)",
    tokens: `${formatTokens(k.value)} of ${formatTokens(k.capacity)}`,
    full: k.fullIn <= 0 ? "full" : `in ${formatDuration(k.fullIn)}`,
    ...(block === undefined ? {} : { blocked: `blocked until ${utcLabel(block.until, block.now)}` }),
  };
}

/**
 * blocksInForce maps each key with a block in force at `now` among `overrides` to the instant
 * (ms) it ends; the global key is `undefined`. Tiers' and networks' overrides block no key by name. It knows the
 * overrides listed so far: a block on a page not loaded yet is not in it.
 */
export function blocksInForce(overrides: readonly OverrideRecord[], now: number): Map<string | undefined, number> {
  const blocks = new Map<string | undefined, number>();
  for (const r of overrides) {
    if ("tier" in r.target || "network" in r.target || !("blockedUntil" in r.override) || !(now < r.override.blockedUntil)) continue;
    blocks.set(r.target.key, r.override.blockedUntil);
  }
  return blocks;
}

/**
 * utcLabel writes an instant (ms) as its UTC clock time, "09:05:00 UTC", with its date in front,
 * "2025-01-02 09:05 UTC", when it falls on another UTC day than `now`.
 */
export function utcLabel(at: number, now: number): string {
  const iso = new Date(at).toISOString();
  if (iso.slice(0, 10) === new Date(now).toISOString().slice(0, 10)) return `${iso.slice(11, 19)} UTC`;
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/**
 * describeTerms says in a few words what an override's config allows: "token bucket: 200 per 1 h,
 * bursts of 200", "fixed window: 5 per 60 s, up to 5 saved", "sliding window: 10 in any 60 s",
 * then any limit on reservations and any lockout.
 */
export function describeTerms(config: RateLimitConfig): string {
  const rate = formatTokens(config.rate);
  const period = formatDuration(config.period);
  const capacity = formatTokens(config.capacity ?? config.rate);
  let head: string;
  switch (config.kind) {
    case "token bucket":
      head = `token bucket: ${rate} per ${period}, bursts of ${capacity}`;
      break;
    case "fixed window":
      head = `fixed window: ${rate} per ${period}, up to ${capacity} saved`;
      break;
    case "sliding window":
      head = `${config.exact === false ? "approximate sliding window" : "sliding window"}: ${rate} in any ${period}`;
      break;
    default: {
      const never: never = config;
      throw new Error(`unknown kind in ${JSON.stringify(never)}`);
    }
  }
  const reserved =
    config.maxReserved === undefined ? "" : config.maxReserved === 0 ? ", no reservations" : `, up to ${formatTokens(config.maxReserved)} reserved`;
  const lockout = config.lockout === undefined ? "" : `, locked out ${formatDuration(config.lockout)} after a refusal`;
  return head + reserved + lockout;
}

/** What an override's row in the admin table says; `blocking` is whether a block is in force at `now`. */
export type OverrideCells = {
  id: string;
  scope: "key" | "network" | "tier";
  target: string;
  terms: string;
  note: string;
  set: string;
  blocking: boolean;
};

/**
 * overrideCells writes an override's row: its target (a key, "(global)" for the limit without a
 * key, a network, or a tier), its terms, "allowed (never limited)" (a network's allow-list entry)
 * or "blocked until <time>" ("(lifted)" once `now` is past it), its note and when it was set.
 * `id` tells rows apart: a key, a network and a tier may share a name.
 */
export function overrideCells(r: OverrideRecord, now: number): OverrideCells {
  const [scope, target] =
    "tier" in r.target
      ? (["tier", r.target.tier] as const)
      : "network" in r.target
        ? (["network", r.target.network] as const)
        : (["key", r.target.key ?? "(global)"] as const);
  const blocking = "blockedUntil" in r.override && now < r.override.blockedUntil;
  const terms =
    "config" in r.override
      ? describeTerms(r.override.config)
      : "allow" in r.override
        ? "allowed (never limited)"
        : `blocked until ${utcLabel(r.override.blockedUntil, now)}${blocking ? "" : " (lifted)"}`;
  // The global key's id is "key:", apart from a key named "(global)".
  const id = `${scope}:${"tier" in r.target ? r.target.tier : "network" in r.target ? r.target.network : (r.target.key ?? "")}`;
  return { id, scope, target, terms, note: r.note ?? "", set: utcLabel(r.updatedAt, now), blocking };
}

/**
 * What the admin's "block" form holds: what it does (`scope`: block a key, the default; block a
 * network, in CIDR, on a limit with network entries; or allow a network, an allow-list entry that
 * is never limited), the key or network, how many minutes a block lasts, and a note (blank: none).
 */
export type BlockForm = { scope?: "key" | "network" | "allow"; key: string; minutes: string; note: string };

/** The arguments of `admin.setRateLimitOverride` the form puts in force, or why it can't be sent. */
export type BlockRequest =
  | {
      ok: true;
      args: { name: string; target: { key: string } | { network: string }; override: { blockedUntil: number } | { allow: true }; note?: string };
    }
  | { ok: false; reason: string };

/**
 * blockRequest turns the form into a block of limit `name`'s key or network for the minutes
 * asked, from `now` (ms, the caller's clock), or a network's allow-list entry: the key or network
 * trimmed and required (a block of the global key would stop everyone; the server checks the
 * network's CIDR and names what is wrong), a block's minutes a positive number (an allow has
 * none), the note trimmed and left out when blank.
 */
export function blockRequest(name: string, form: BlockForm, now: number): BlockRequest {
  const key = form.key.trim();
  const network = form.scope === "network" || form.scope === "allow";
  if (key === "") return { ok: false, reason: network ? "Name the network, e.g. 203.0.113.0/24." : "Name the key to block." };
  const note = form.note.trim();
  const noted = note === "" ? {} : { note };
  if (form.scope === "allow") return { ok: true, args: { name, target: { network: key }, override: { allow: true }, ...noted } };
  const minutes = form.minutes.trim() === "" ? NaN : Number(form.minutes);
  if (!Number.isFinite(minutes) || minutes <= 0) {
    return { ok: false, reason: `Block for a positive number of minutes, not "${form.minutes}".` };
  }
  return {
    ok: true,
    args: { name, target: network ? { network: key } : { key }, override: { blockedUntil: now + minutes * MINUTE }, ...noted },
  };
}

/**
 * heatLine says in one sentence how hot the limit's busiest minute ran (`MetricsResult.heat`):
 * its writes a second per shard beside what the sizing rule allows for its mutations' time, and,
 * when too hot, what the rule recommends.
 */
export function heatLine(heat: Heat): string {
  const rate = (x: number) => `${+x.toFixed(2)}`;
  const measured = `Busiest minute: ${rate(heat.writesPerShard)} writes a second per shard; the sizing rule allows ${rate(heat.maxWritesPerShard)} for ${heat.mutationMs} ms mutations`;
  if (!heat.hot || heat.recommend === undefined) return `${measured}.`;
  const advice =
    heat.recommend.applyUpdates === "asynchronously"
      ? `applyUpdates: "asynchronously", or a shorter limited mutation`
      : `shards: ${heat.recommend.shards}`;
  return `${measured}: too hot, use ${advice}.`;
}
