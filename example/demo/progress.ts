// Progress on stderr while the demo runs. On a terminal: one line, rewritten in place at most ten
// times a second and erased when a step ends (so stdout's results never land mid-line). Elsewhere
// (CI logs, pipes): one plain line when a step starts and one when it ends, nothing in between.

/** Where progress goes: stderr, or a stand-in in tests. */
export type ProgressStream = { isTTY?: boolean; write(text: string): unknown };

/** Reports the progress of named steps; see the module comment. */
export class Progress {
  private label = "";
  private lastDraw = -Infinity;

  /**
   * @param stream Where to write (usually `process.stderr`).
   * @param now Real time in ms, for throttling (`performance.now`, which the simulated clock leaves alone).
   */
  constructor(
    private readonly stream: ProgressStream,
    private readonly now: () => number,
  ) {}

  private get tty(): boolean {
    return this.stream.isTTY === true;
  }

  /** Starts a step called `label`. */
  start(label: string): void {
    this.label = label;
    this.lastDraw = -Infinity;
    if (this.tty) this.draw("starting");
    else this.stream.write(`demo: ${label} ...\n`);
  }

  /** Reports how far the step is (only drawn on a terminal, and not more than ten times a second). */
  update(status: string): void {
    if (!this.tty || this.now() - this.lastDraw < 100) return;
    this.draw(status);
  }

  /** Ends the step; `status` says how it went. */
  done(status: string): void {
    if (this.tty) this.stream.write("\r\x1b[K");
    else this.stream.write(`demo: ${this.label}: ${status}\n`);
  }

  private draw(status: string): void {
    this.lastDraw = this.now();
    // Kept short of 80 columns, so it never wraps (a wrapped line can't be rewritten in place).
    const line = `demo: ${this.label}: ${status}`.slice(0, 79);
    this.stream.write(`\r\x1b[K${line}`);
  }
}
