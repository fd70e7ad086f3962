// The database adapter of `queuedRuns` (runs queued by `runWhenAllowed` and `waitUntilAllowed`)
// and of the jobs this component scheduled for them: every query on them is written once, here.
// Split from store.ts, which would pass the 450-line rule with it.
import type { SystemDataModel, WithoutSystemFields } from "convex/server";
import type { Doc, Id } from "./_generated/dataModel.js";
import type { DatabaseReader, DatabaseWriter } from "./_generated/server.js";
import { firstOf, type KeyAddress } from "./store.js";

/** The queued runs of one key, in the order of their `runAt`. */
function runsQuery(db: DatabaseReader, { name, key }: KeyAddress) {
  return db.query("queuedRuns").withIndex("key", (i) => i.eq("name", name).eq("key", key));
}

/**
 * queuedUntil returns the latest `runAt` (UTC ms) of the runs queued for one key, or undefined
 * when none is recorded: a new run of the key is never scheduled before it. One indexed read.
 */
export async function queuedUntil(db: DatabaseReader, at: KeyAddress): Promise<number | undefined> {
  return (await firstOf(runsQuery(db, at).order("desc")))?.runAt;
}

/** pendingRuns returns the runs queued for one key that run after `now` (ms), in `runAt` order. */
export function pendingRuns(db: DatabaseReader, { name, key }: KeyAddress, now: number): Promise<Doc<"queuedRuns">[]> {
  return db
    .query("queuedRuns")
    .withIndex("key", (i) => i.eq("name", name).eq("key", key).gt("runAt", now))
    .collect();
}

/** insertRun records a queued run. */
export function insertRun(db: DatabaseWriter, run: WithoutSystemFields<Doc<"queuedRuns">>): Promise<Id<"queuedRuns">> {
  return db.insert("queuedRuns", run);
}

/** A job this component scheduled (`_scheduled_functions`), or null when there is none. */
export function scheduledJob(db: DatabaseReader, job: Id<"_scheduled_functions">): Promise<SystemDataModel["_scheduled_functions"]["document"] | null> {
  return db.system.get(job);
}

/** The state of a job this component scheduled (`_scheduled_functions`), or undefined when there is none. */
export async function jobState(db: DatabaseReader, job: Id<"_scheduled_functions">): Promise<SystemDataModel["_scheduled_functions"]["document"]["state"]["kind"] | undefined> {
  return (await db.system.get(job))?.state.kind;
}

/**
 * pruneRuns deletes up to `most` of one key's runs that are over at `now`: due (`runAt` before
 * `now`) and either only a place in line (`waitUntilAllowed`'s, no job) or with a job that
 * started, finished or was cancelled. A run whose job is still pending stays: `cancelRun` needs
 * it. Bounded work per call keeps a key's runs to those still queued, with no cron.
 */
export async function pruneRuns(db: DatabaseWriter, at: KeyAddress, now: number, most: number): Promise<number> {
  const due = await runsQuery(db, at).order("asc").take(most);
  let deleted = 0;
  for (const run of due) {
    if (!(run.runAt < now)) break;
    if (!(await isOver(db, run))) continue;
    await db.delete("queuedRuns", run._id);
    deleted++;
  }
  return deleted;
}

/** Where a pass over the runs that are due goes on: after the run with this `runAt` and `_creationTime`. */
export type RunCursor = { runAt: number; created: number };

/**
 * dueRuns returns up to `most` runs that are due at `now` (`runAt` before it), in `runAt` order
 * (then creation order), after `after` when given: one index range, two when going on from a
 * cursor (the rest of the cursor's instant, then the later ones).
 */
export async function dueRuns(db: DatabaseReader, now: number, most: number, after?: RunCursor): Promise<Doc<"queuedRuns">[]> {
  if (after === undefined) return await db.query("queuedRuns").withIndex("runAt", (i) => i.lt("runAt", now)).take(most);
  const same = await db
    .query("queuedRuns")
    .withIndex("runAt", (i) => i.eq("runAt", after.runAt).gt("_creationTime", after.created))
    .take(most);
  if (same.length >= most || !(after.runAt < now)) return same.filter((r) => r.runAt < now);
  const later = await db
    .query("queuedRuns")
    .withIndex("runAt", (i) => i.gt("runAt", after.runAt).lt("runAt", now))
    .take(most - same.length);
  return [...same, ...later];
}

/**
 * isOver tells whether a due run may be deleted: it is only a place in line (no job), or its job
 * started, finished or was cancelled. A run whose job is still pending stays: `cancelRun` needs
 * it. One read of the job when there is one.
 */
export async function isOver(db: DatabaseReader, run: Doc<"queuedRuns">): Promise<boolean> {
  return run.job === undefined || (await jobState(db, run.job)) !== "pending";
}

/** runOfJob returns the queued run a job runs, or null. */
export function runOfJob(db: DatabaseReader, job: Id<"_scheduled_functions">): Promise<Doc<"queuedRuns"> | null> {
  return firstOf(db.query("queuedRuns").withIndex("job", (i) => i.eq("job", job)));
}

/** deleteRun deletes a queued run. */
export function deleteRun(db: DatabaseWriter, id: Id<"queuedRuns">): Promise<void> {
  return db.delete("queuedRuns", id);
}

/** normalizeJob returns `id` as the id of a job in this component's `_scheduled_functions`, or null. */
export function normalizeJob(db: DatabaseReader, id: string): Id<"_scheduled_functions"> | null {
  return db.system.normalizeId("_scheduled_functions", id);
}

/**
 * deleteKeyRuns deletes every run queued for one key (a reset's): their jobs still run, but a
 * later `cancelRun` finds no run to credit, as the reset already made the key full.
 */
export async function deleteKeyRuns(db: DatabaseWriter, at: KeyAddress): Promise<void> {
  for (const run of await runsQuery(db, at).collect()) await db.delete("queuedRuns", run._id);
}
