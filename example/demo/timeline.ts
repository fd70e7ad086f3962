// A discrete-event timeline: actions scheduled at simulated instants run in time order (ties in the
// order they were scheduled), each after the clock has been moved to its instant. Actions may
// schedule more (a user who waits `retryAfter` and tries again). Moving the clock is left to the
// caller, so this stays pure and testable; the demo moves a fake clock and runs due Convex jobs.

/** One scheduled action. */
type Entry = { at: number; seq: number; run: () => Promise<void> | void };

/** A timeline of actions; see the module comment. */
export class Timeline {
  private heap: Entry[] = [];
  private seq = 0;
  /** The instant of the last action run. */
  private now = -Infinity;

  /**
   * @param advance Moves the clock to `at` (ms) before an action due then runs; it is only ever
   *   called with non-decreasing instants.
   */
  constructor(private readonly advance: (at: number) => Promise<void> | void) {}

  /** How many actions are waiting. */
  get size(): number {
    return this.heap.length;
  }

  /** Schedules `run` at instant `at` (ms). */
  at(at: number, run: () => Promise<void> | void): void {
    this.heap.push({ at, seq: this.seq++, run });
    this.up(this.heap.length - 1);
  }

  /**
   * Runs every action due up to `until` (inclusive), in order, and returns how many ran.
   * Actions scheduled meanwhile for `until` or earlier run too (never earlier than the clock).
   */
  async runUntil(until: number): Promise<number> {
    let ran = 0;
    while (this.heap.length > 0 && this.heap[0]!.at <= until) {
      const next = this.pop();
      // An action scheduled in the past runs now: time never goes backwards.
      const at = Math.max(this.now, next.at);
      await this.advance(at);
      this.now = at;
      await next.run();
      ran++;
    }
    return ran;
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private pop(): Entry {
    const top = this.heap[0]!;
    const last = this.heap.pop()!;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return top;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.heap[i]!, this.heap[parent]!)) return;
      [this.heap[i], this.heap[parent]] = [this.heap[parent]!, this.heap[i]!];
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < this.heap.length && this.less(this.heap[l]!, this.heap[best]!)) best = l;
      if (r < this.heap.length && this.less(this.heap[r]!, this.heap[best]!)) best = r;
      if (best === i) return;
      [this.heap[i], this.heap[best]] = [this.heap[best]!, this.heap[i]!];
      i = best;
    }
  }
}
