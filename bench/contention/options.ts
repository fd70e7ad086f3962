// The command line of `npm run simulate`: its options, what `--help` prints, and their parsing. A
// bad option is a UsageError (tools/usage.ts), which tools/run.mjs prints alone, exit code 2.
import path from "node:path";
import { UsageError } from "../../tools/usage.js";
import { pct } from "../table.js";
import { IMPLS, type Impl } from "./cell.js";
import { PLAN_SERVICE_MS } from "./plan.js";
import { FAIL_TARGET, SECTION_ABOUT, SECTIONS, type Section, type Workload } from "./sections.js";

/** The options of a run: the workload's (sections.ts), and what the command line adds. */
export type Options = Workload & {
  /** Offered load as a fraction of the limit's rate (grid and check). */
  load: number;
  /** The sections to run (default all). */
  only: Set<Section>;
  out: string;
  write: boolean;
  /** `--plan`: the sizing rule's table and its cells checked, instead of the sections; `qpsGiven`: --qps was. */
  plan: boolean;
  qpsGiven: boolean;
  /**
   * `--decide-ms`: the work's own time (ms), run after a short limited transaction ("decide short,
   * work later"), whose time is then `serviceMs`; null when the work runs inside it.
   */
  workMs: number | null;
};

/** What `npm run simulate -- --help` prints. */
export const USAGE = `usage: npm run simulate -- [--quick] [options]

How many shards, and which mode, for your traffic: every run first prints the sizing rule's
recommendation for its --qps and --service (your mutation's time from the limit's read to its
commit, 25 ms by default), and its grid measures it:
  npm run simulate -- --qps <your peak QPS> --service <ms> --only grid
in its table "Smallest shard count with failed requests under ${pct(FAIL_TARGET, 1)}".
  npm run simulate -- --plan
prints the rule's table over peak QPS × mutation time, as docs/hot-limits.md has it in
"The sizing rule", and runs its cells at 90, 150 and 300 % load. docs/hot-limits.md has the
smallest-shards table for 10 to 1,000 QPS, in "Choosing shards and modes", and what to choose
under overload, in "What to choose".

  (default)          20 s of model time per cell, every section (a few minutes)
  --quick            2 s per cell (CI: only that it runs matters, not its numbers)
  --seconds N        model seconds of arrivals per cell
  --seed N           seed of every random stream (default 1)
  --qps LIST         offered requests per second (default 10,50,100,200,500,1000)
  --shards LIST      shard counts (default 1,2,5,10,20,50)
  --load F           offered load as a fraction of the limit's rate (default 0.9)
  --rate R           the limit's rate per second instead of qps / load (capacity = rate)
  --service MS       a transaction's time from snapshot to commit (default 25)
  --decide-ms MS     decide short, work later: the limited transaction takes MS ms and the work
                     (--service) runs after it in its own transaction, reading none of the limit's
                     rows (runWhenAllowed, or an action calling limit then the work)
  --retries N        retries after a conflict before a request fails (default 4)
  --backoff MS       each retry waits uniform [0, MS) ms (default 10)
  --staleness MS     stale snapshots lag by uniform [0, MS) ms (default 100)
  --apply-every MS   the applier starts a batch every MS ms (default 50)
  --stress-load F    the overload section's offered load (default 1.5)
  --checked-refusals a transaction that writes nothing is checked for conflicts like any
                     other (pessimistic; default: never, as Convex's committer skips it)
  --free-refusals    the default, kept for old command lines
  --only LIST        run only these sections, comma-separated (default all):
${SECTIONS.map((name) => `      ${name.padEnd(9)} ${SECTION_ABOUT[name]}`).join("\n")}
  --impl LIST        run only these implementations: ours, upstream (default both)
  --out DIR          where simulate-report.json and .svg go (default: the repository root)
  --no-write         print only
  --plan             the sizing rule: its table over peak QPS × mutation time, then its mode and
                     shards run at 90/150/300 % load for --qps (default 200,1000) at
                     ${PLAN_SERVICE_MS.join(", ")} ms; no other section`;

/** The options `argv` asks for; null for `--help`, which prints the usage and runs nothing. */
export function parseOptions(argv: readonly string[]): Options | null {
  const opts: Options = {
    seed: 1,
    seconds: 20,
    qps: [10, 50, 100, 200, 500, 1000],
    shards: [1, 2, 5, 10, 20, 50],
    load: 0.9,
    rate: null,
    serviceMs: 25,
    maxRetries: 4,
    backoffMs: 10,
    stalenessMs: 100,
    applyEveryMs: 50,
    stressLoad: 1.5,
    readOnlyConflicts: false,
    only: new Set(SECTIONS),
    impls: [...IMPLS],
    out: process.cwd(),
    write: true,
    plan: false,
    qpsGiven: false,
    workMs: null,
  };
  let seconds: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value\n${USAGE}`);
      return v;
    };
    const number = (v: string, ok: (x: number) => boolean, what: string) => {
      const n = Number(v);
      if (!Number.isFinite(n) || !ok(n)) throw new UsageError(`${arg} ${v}: expected ${what}\n${USAGE}`);
      return n;
    };
    const positive = (v: string) => number(v, (x) => x > 0, "a number > 0");
    const whole = (v: string) => number(v, (x) => Number.isSafeInteger(x) && x >= 0, "a whole number");
    const list = (v: string, f: (s: string) => number) => v.split(",").map(f);
    switch (arg) {
      case "--quick":
        seconds ??= 2;
        break;
      case "--seconds":
        seconds = positive(value());
        break;
      case "--seed":
        opts.seed = whole(value());
        break;
      case "--qps":
        opts.qps = list(value(), positive);
        opts.qpsGiven = true;
        break;
      case "--shards":
        opts.shards = list(value(), (s) => number(s, (x) => Number.isInteger(x) && x >= 1, "whole numbers ≥ 1"));
        break;
      case "--load":
        opts.load = number(value(), (x) => x > 0 && x <= 10, "a fraction > 0");
        break;
      case "--rate":
        opts.rate = positive(value());
        break;
      case "--service":
        opts.serviceMs = positive(value());
        break;
      case "--retries":
        opts.maxRetries = whole(value());
        break;
      case "--backoff":
        opts.backoffMs = number(value(), (x) => x >= 0, "a number ≥ 0");
        break;
      case "--staleness":
        opts.stalenessMs = number(value(), (x) => x >= 0, "a number ≥ 0");
        break;
      case "--apply-every":
        opts.applyEveryMs = positive(value());
        break;
      case "--stress-load":
        opts.stressLoad = number(value(), (x) => x > 0 && x <= 10, "a fraction > 0");
        break;
      case "--free-refusals":
        opts.readOnlyConflicts = false;
        break;
      case "--checked-refusals":
        opts.readOnlyConflicts = true;
        break;
      case "--only":
        opts.only = new Set(
          value()
            .split(",")
            .map((v) => {
              if (!(SECTIONS as readonly string[]).includes(v)) throw new UsageError(`--only ${v}: expected one of ${SECTIONS.join(", ")}\n${USAGE}`);
              return v as Section;
            }),
        );
        break;
      case "--impl":
        opts.impls = value()
          .split(",")
          .map((v) => {
            if (!(IMPLS as readonly string[]).includes(v)) throw new UsageError(`--impl ${v}: expected ours or upstream\n${USAGE}`);
            return v as Impl;
          });
        break;
      case "--out":
        opts.out = path.resolve(value());
        break;
      case "--no-write":
        opts.write = false;
        break;
      case "--plan":
        opts.plan = true;
        break;
      case "--decide-ms":
        opts.workMs = positive(value());
        break;
      case "--help":
      case "-h":
        console.log(USAGE);
        return null;
      default:
        throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    }
  }
  opts.seconds = seconds ?? opts.seconds;
  // The model's service is the limited transaction's time: the work after it conflicts with nothing here.
  if (opts.workMs !== null) [opts.serviceMs, opts.workMs] = [opts.workMs, opts.serviceMs];
  return opts;
}
