// The demo's command line: parsing (pure; errors are returned, not thrown), the help text, and a
// check, before anything runs, that the report can be written (the one part that reads the disk).
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

/** The scenarios, in the order they run. */
export const SCENARIOS = ["messages", "signups", "llm", "api", "seam", "generations", "overrides"] as const;
export type ScenarioId = (typeof SCENARIOS)[number];

/** The default report path, relative to the directory the demo runs in (the project root). */
export const DEFAULT_REPORT = "demo-report.html";

/** What to run and how. */
export type Options = {
  scenarios: ScenarioId[];
  /** Seed of every random stream. */
  seed: number;
  /** Smaller runs, for CI. */
  fast: boolean;
  /** Assert the invariants and exit 1 on a violation. */
  check: boolean;
  /** Where to write the HTML report; null for none. */
  report: string | null;
  /** Terminal chart width, columns. */
  width: number;
  /** Simulated minutes per scenario; unset: each scenario's own default. */
  minutes: number | undefined;
  /** messages: users chatting. */
  users: number;
  /** signups: sign-up attempts per hour. */
  signups: number;
  /** llm: requests per minute. */
  requests: number;
  /** api: peak demand, as a multiple of the limit's rate. */
  load: number;
};

/** The outcome of parsing: options to run with, the help text to print, or an error to report. */
export type Parsed = { kind: "run"; options: Options } | { kind: "help"; text: string } | { kind: "error"; message: string };

/** Simulated minutes each scenario runs for, normally and with `--fast`. */
export const MINUTES: Record<ScenarioId, { normal: number; fast: number }> = {
  messages: { normal: 4, fast: 2 },
  signups: { normal: 180, fast: 120 },
  llm: { normal: 6, fast: 3 },
  api: { normal: 0.5, fast: 0.25 },
  // Long enough for a burst at every other turn of the hour: 3 of them, or 1 with --fast.
  seam: { normal: 340, fast: 100 },
  // At least the first crashed lease (2 minutes) and a minute more, whatever --minutes says.
  generations: { normal: 5, fast: 3 },
  // At least 12, for the override (at 6m11s), the block (7m10s) and two bursts after them.
  overrides: { normal: 30, fast: 15 },
};

/** The per-scenario parameters' defaults, normally and with `--fast`. */
const PARAMS = {
  users: { normal: 3, fast: 2 },
  signups: { normal: 400, fast: 200 },
  requests: { normal: 14, fast: 16 },
  load: { normal: 2, fast: 2 },
} as const;

export const USAGE = `usage: npm run demo -- [options]

Runs the example app's Convex functions in-process on convex-test with a
simulated clock, through scripted traffic, and reports what the rate limiter
decided: a chart, a summary and checks per scenario, and an HTML report.

  --scenario NAME   ${SCENARIOS.join(", ")},
                    or all (default); several with commas: llm,api
  --seed N          seed of every random stream (default 1)
  --fast            smaller runs, for CI
  --check           assert the invariants (never over the bound, reserved
                    work runs when promised, ...); exit 1 naming any violation
  --report PATH     write the HTML report there (default ${DEFAULT_REPORT})
  --no-report       don't write the HTML report
  --width N         chart width in columns (default 80)
  --minutes N       simulated minutes of each chosen scenario; defaults:
                    messages ${MINUTES.messages.normal}, signups ${MINUTES.signups.normal}, llm ${MINUTES.llm.normal}, api ${MINUTES.api.normal}, seam ${MINUTES.seam.normal},
                    generations ${MINUTES.generations.normal} (at least 3), overrides ${MINUTES.overrides.normal} (at least 12)
                    (fast: ${MINUTES.messages.fast}, ${MINUTES.signups.fast}, ${MINUTES.llm.fast}, ${MINUTES.api.fast}, ${MINUTES.seam.fast}, ${MINUTES.generations.fast}, ${MINUTES.overrides.fast})
  --users N         messages: users chatting at once (default ${PARAMS.users.normal})
  --signups N       signups: sign-up attempts per hour (default ${PARAMS.signups.normal})
  --requests N      llm: requests per minute, 1k-15k tokens each (default ${PARAMS.requests.normal})
  --load X          api: peak demand, times the limit's rate (default ${PARAMS.load.normal})
  --help            this text

Scenarios:
  messages  users burst chat messages (sendMessage: 10/min, bursts of 3),
            then send when the limiter says they may
  signups   a flood of sign-ups against one global fixed window
            (freeTrialSignUp: 100/hour), with the default per-name phase
            and with an explicit start
  llm       LLM requests reserve tokens of a 40k/min budget (llmTokens);
            their work is scheduled for when the tokens exist
  api       a hot global limit over 10 shards (apiCalls: 100/s) under a
            load peak
  seam      bursts of emails at the turn of the hour, the same arrivals
            against outboundEmails (a sliding window: 100 in any hour) and
            the same 100/hour as a fixed window and a token bucket
  generations
            LLM generations, at most 2 in flight per user (llmGenerations:
            a concurrency limit, 2-minute leases); some crash, and their
            slots free themselves exactly at their lease's expiry
  overrides limits as data: a free and a pro user's LLM requests
            (llmRequests: 20/hour; the pro tier's override, 10x, set
            mid-run), a brute force locked out for a day (failedLogins'
            lockout) and an admin's block of another account`;

/** Parses the demo's arguments (those after the entry). */
export function parseArgs(argv: readonly string[]): Parsed {
  let scenarios: ScenarioId[] = [...SCENARIOS];
  let seed = 1;
  let fast = false;
  let check = false;
  let report: string | null = DEFAULT_REPORT;
  let width = 80;
  let minutes: number | undefined;
  const given: Partial<Record<keyof typeof PARAMS, number>> = {};
  const args = argv.flatMap((a) => (/^--[a-z-]+=/.test(a) ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a]));
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = (): string | { error: string } => {
      const v = args[++i];
      return v === undefined || v.startsWith("--") ? { error: `${arg} needs a value` } : v;
    };
    const number = (opts: { integer?: boolean; min: number; max?: number }): number | { error: string } => {
      const v = value();
      if (typeof v !== "string") return v;
      const n = Number(v);
      const ok = v.trim() !== "" && Number.isFinite(n) && n >= opts.min && (opts.max === undefined || n <= opts.max);
      if (!ok || (opts.integer === true && !Number.isInteger(n))) {
        const kind = opts.integer === true ? "a whole number" : "a number";
        const range = opts.max === undefined ? `at least ${opts.min}` : `from ${opts.min} to ${opts.max}`;
        return { error: `${arg} ${v}: expected ${kind} ${range}` };
      }
      return n;
    };
    let result: number | string | { error: string } | undefined;
    switch (arg) {
      case "--help":
      case "-h":
        return { kind: "help", text: USAGE };
      case "--fast":
        fast = true;
        break;
      case "--check":
        check = true;
        break;
      case "--no-report":
        report = null;
        break;
      case "--report":
        result = value();
        if (typeof result === "string") report = result;
        break;
      case "--scenario": {
        result = value();
        if (typeof result !== "string") break;
        const names = result.split(",").map((s) => s.trim());
        if (names.includes("all")) {
          scenarios = [...SCENARIOS];
          break;
        }
        const unknown = names.filter((n) => !isScenario(n));
        if (unknown.length > 0 || names.length === 0) {
          result = { error: `--scenario: unknown scenario ${unknown.join(",")} (choose from ${SCENARIOS.join(", ")}, all)` };
          break;
        }
        // In the canonical order, each once.
        scenarios = SCENARIOS.filter((s) => names.includes(s));
        break;
      }
      case "--seed":
        result = number({ integer: true, min: 0, max: 2 ** 32 - 1 });
        if (typeof result === "number") seed = result;
        break;
      case "--width":
        result = number({ integer: true, min: 40, max: 300 });
        if (typeof result === "number") width = result;
        break;
      case "--minutes":
        result = number({ min: 0.05, max: 24 * 60 });
        if (typeof result === "number") minutes = result;
        break;
      case "--users":
        result = number({ integer: true, min: 1, max: 50 });
        if (typeof result === "number") given.users = result;
        break;
      case "--signups":
        result = number({ integer: true, min: 1, max: 20_000 });
        if (typeof result === "number") given.signups = result;
        break;
      case "--requests":
        result = number({ min: 0.1, max: 600 });
        if (typeof result === "number") given.requests = result;
        break;
      case "--load":
        result = number({ min: 0.01, max: 20 });
        if (typeof result === "number") given.load = result;
        break;
      default:
        return { kind: "error", message: `unknown argument ${arg}` };
    }
    if (typeof result === "object") return { kind: "error", message: result.error };
  }
  const pick = (k: keyof typeof PARAMS) => given[k] ?? (fast ? PARAMS[k].fast : PARAMS[k].normal);
  return {
    kind: "run",
    options: {
      scenarios,
      seed,
      fast,
      check,
      report,
      width,
      minutes,
      users: pick("users"),
      signups: pick("signups"),
      requests: pick("requests"),
      load: pick("load"),
    },
  };
}

/** The simulated minutes scenario `id` runs for under `opts`. */
export function minutesFor(id: ScenarioId, opts: Pick<Options, "minutes" | "fast">): number {
  return opts.minutes ?? (opts.fast ? MINUTES[id].fast : MINUTES[id].normal);
}

function isScenario(name: string): name is ScenarioId {
  return (SCENARIOS as readonly string[]).includes(name);
}

/**
 * reportPathError says in one line why the HTML report can't be written to `report` (resolved
 * against `cwd`), or returns null when it can: its directory must exist and be writable, and the
 * path must not be a directory. The demo checks this before running, so a bad `--report` fails at
 * once instead of after the whole simulation.
 */
export function reportPathError(report: string, cwd: string): string | null {
  const file = path.resolve(cwd, report);
  const dir = path.dirname(file);
  const problem = (what: string) => `--report ${report}: ${what}`;
  const stat = (p: string) => {
    try {
      return statSync(p);
    } catch {
      return undefined; // missing, or a path through a file
    }
  };
  const parent = stat(dir);
  if (parent === undefined) return problem(`no such directory ${dir}`);
  if (!parent.isDirectory()) return problem(`${dir} is not a directory`);
  const existing = stat(file);
  if (existing?.isDirectory() === true) return problem("is a directory");
  // An existing report is overwritten; a new one is created in the directory.
  const target = existing === undefined ? dir : file;
  try {
    accessSync(target, constants.W_OK);
  } catch {
    return problem(`${target} is not writable`);
  }
  return null;
}
