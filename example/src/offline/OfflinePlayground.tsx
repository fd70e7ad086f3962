// The Playground and Monitor without a deployment: a what-if simulation in the browser. Requests
// are fired at a simulated clock that only moves when asked to, and every change to the config
// replays them all, so the chart answers "what if the limit were…?" at once.
import { useMemo, useState } from "react";
import { capacityOf, DEFAULT_FORM, parseForm, wholeConfig, type Form } from "../playground/config.js";
import { DecisionLog, marksOf, type Entry } from "../playground/decisions.js";
import { PlaygroundForm } from "../playground/PlaygroundForm.js";
import { formatSeconds } from "../monitor/Chart.js";
import { horizon, Monitor, refillTime } from "../monitor/Monitor.js";
import { simulate, type SimRequest, type Simulation } from "./simulate.js";

/** How many requests "Fire a burst" sends at one instant. */
const BURST = 5;
/** The most requests kept; older ones are dropped from the replay. */
const MAX_REQUESTS = 500;

type SimState = { clock: number; requests: SimRequest[]; nextId: number };

const EMPTY: SimState = { clock: 0, requests: [], nextId: 1 };

export function OfflinePlayground() {
  const [form, setForm] = useState<Form>(DEFAULT_FORM);
  const [sim, setSim] = useState<SimState>(EMPTY);
  const [waitSeconds, setWaitSeconds] = useState("1");
  const parsed = useMemo(() => parseForm(form), [form]);
  // The last valid config stays on the chart while a field is being retyped.
  const [lastGood, setLastGood] = useState(parsed.ok ? parsed : undefined);
  if (parsed.ok && parsed !== lastGood) setLastGood(parsed);
  const shown = parsed.ok ? parsed : lastGood;

  const simulation: Simulation | undefined = useMemo(
    () => (shown === undefined ? undefined : simulate(shown.config, sim.requests)),
    [shown, sim.requests],
  );

  const fire = (n: number) => {
    if (!parsed.ok) return;
    setSim((s) => {
      const added = Array.from({ length: n }, (_, i) => ({
        id: s.nextId + i,
        t: s.clock,
        count: parsed.count,
        reserve: parsed.reserve,
      }));
      return { ...s, requests: [...s.requests, ...added].slice(-MAX_REQUESTS), nextId: s.nextId + n };
    });
  };
  const wait = (ms: number) => setSim((s) => ({ ...s, clock: s.clock + Math.max(0, Math.round(ms)) }));
  const waitMs = Number(waitSeconds) * 1000;
  const waitValid = waitSeconds.trim() !== "" && Number.isFinite(waitMs) && waitMs > 0;

  const whole = shown === undefined ? undefined : wholeConfig(shown.config);
  const segments = simulation?.segments ?? [];
  const entries: Entry[] = (simulation?.decisions ?? []).map((d) => ({
    id: d.request.id,
    t: d.request.t,
    count: d.request.count,
    reserve: d.request.reserve,
    outcome: d.outcome,
    after: d.after,
  }));
  const untilFull = whole === undefined ? 0 : refillTime(whole, segments, sim.clock);

  return (
    <div className="workbench">
      <section className="panel playground" aria-labelledby="playground-heading">
        <h2 id="playground-heading">Playground</h2>
        <p className="panel-note">
          What-if mode: requests are decided in your browser by <code>calculateRateLimit</code>, the function the
          server uses, at a simulated clock. Change the limit and every request is replayed under it.
          {shown !== undefined && (shown.config.shards ?? 1) > 1 && (
            <> Shards are simulated as one whole row: they change which rows hold the tokens, not how many.</>
          )}
        </p>
        <PlaygroundForm form={form} parsed={parsed} onChange={setForm} />
        <div className="actions" role="group" aria-label="Traffic">
          <button type="button" onClick={() => fire(1)} disabled={!parsed.ok}>
            Fire request
          </button>
          <button type="button" onClick={() => fire(BURST)} disabled={!parsed.ok}>
            Fire {BURST} at once
          </button>
          <label className="inline-field">
            <span>Wait (s)</span>
            <input
              type="number"
              min={0}
              step="any"
              value={waitSeconds}
              aria-invalid={!waitValid}
              onChange={(e) => setWaitSeconds(e.target.value)}
            />
          </label>
          <button type="button" onClick={() => wait(waitMs)} disabled={!waitValid}>
            Wait
          </button>
          <button type="button" onClick={() => wait(untilFull)} disabled={!(untilFull > 0)}>
            Wait until full
          </button>
          <button type="button" className="secondary" onClick={() => setSim(EMPTY)} disabled={sim === EMPTY}>
            Reset
          </button>
        </div>
        <p className="clock">
          Simulated clock: <output data-testid="sim-clock">{formatSeconds(sim.clock)}</output>
        </p>
        <DecisionLog entries={entries} origin={0} />
      </section>
      {whole !== undefined && (
        <Monitor
          config={whole}
          segments={segments}
          from={0}
          to={horizon(whole, segments, 0, sim.clock, Infinity)}
          now={sim.clock}
          origin={0}
          marks={marksOf(entries, 0)}
        >
          <p className="panel-note">
            Simulated: the solid line is what happened up to the simulated clock, the dashed line what follows if no
            more requests come. Capacity {capacityOf(whole)}.
          </p>
        </Monitor>
      )}
    </div>
  );
}
