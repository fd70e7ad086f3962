// The shapes a demo scenario produces and the renderers (terminal chart, HTML report) consume.
import type { SummaryRow } from "./format.js";

/**
 * What happened to one request, as drawn under the chart: let through now, its tokens reserved
 * for later, refused; or (for reservations) the scheduled work running.
 */
export type MarkKind = "admitted" | "reserved" | "refused" | "ran";

/** The mark kinds in the order their lanes are drawn. */
export const MARK_KINDS: readonly MarkKind[] = ["admitted", "reserved", "ran", "refused"];

/** One event under the chart, at `at` (ms since the epoch). */
export type Mark = { at: number; kind: MarkKind };

/** One sample of the tokens available: `value` tokens at `at` (ms since the epoch). */
export type Point = { at: number; value: number };

/** An invariant the demo asserts with `--check`; `detail` says what was measured. */
export type Check = { name: string; ok: boolean; detail: string };

/** The chart of one scenario: the tokens available over [start, end], and the events under it. */
export type ChartData = {
  /** What the series is, e.g. "tokens of sendMessage for alice". */
  title: string;
  start: number;
  end: number;
  points: Point[];
  /** The vertical axis's title; default "tokens available". */
  axis?: string;
  /** The limit's capacity, drawn as a reference line. */
  capacity: number;
  /** The deepest the tokens may go (minus `maxReserved`), when reservations are made. */
  floor?: number;
  marks: Mark[];
};

/** Everything one scenario reports. */
export type ScenarioResult = {
  /** The scenario's option name, e.g. "signups". */
  id: string;
  /** A heading, e.g. "sign-ups flood a global fixed window (default phase)". */
  title: string;
  /** A few sentences saying what ran. */
  about: string[];
  chart: ChartData;
  /**
   * More charts drawn under `chart`, on the same time axis: the same traffic under other limits,
   * compared side by side.
   */
  alongside?: ChartData[];
  summary: SummaryRow[];
  checks: Check[];
  /** How many convex-test calls (mutations, queries, runs) the scenario made. */
  calls: number;
  /** Real time the scenario took, ms. */
  wallMs: number;
};
