// The arithmetic of a result's details: the whole limit's tokens from the shards read, and when
// a shard is full again.
import { delayUntil, type Params, type State } from "../kinds/algebra.js";

/**
 * The whole limit's tokens from the shards read: their sum when every shard was read (`exact`),
 * otherwise scaled by capacity to the whole limit (a sample of zero capacity can't be scaled).
 */
export function scaledTotal(sum: number, readCapacity: number, capacity: number, exact: boolean): number {
  return exact || readCapacity === 0 ? sum : (sum * capacity) / readCapacity;
}

/** Whole ms until `state` is full (0 when it is now), with no other traffic. */
export function fullAfter(state: State, p: Params, now: number): number {
  return state.value >= p.capacity ? 0 : delayUntil(state, p, now, p.capacity);
}
