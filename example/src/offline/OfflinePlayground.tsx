// The Playground and Monitor without a deployment: the rate limiter component runs in the page
// (deployment.ts), on a simulated clock that moves when asked to, and as the deployment's own clock
// does with its commits. Every decision, reading and form error is the component's own; see
// simulation.ts.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { formatDuration } from "../monitor/format.js";
import { Monitor } from "../monitor/Monitor.js";
import { DEFAULT_FORM, formError, requestOf, type Form, type FormRequest } from "../playground/config.js";
import { DecisionLog, describe, marksOf, outcomeOf } from "../playground/decisions.js";
import { describeShards } from "../playground/entries.js";
import { PlaygroundForm } from "../playground/PlaygroundForm.js";
import { useValidation } from "../playground/useValidation.js";
import { openLane } from "./deployment.js";
import type { Lane } from "./lane.js";
import { Simulation, type Snapshot } from "./simulation.js";

/**
 * How many requests "Fire 5 at once" sends, one right after another: the deployment decides two
 * in a ms, then moves to the next (0, 0, 1, 1, 2 ms), as a deployment's commits move its clock.
 */
const BURST = 5;

/**
 * useSimulation keeps one simulation on its own in-browser deployment, and its latest snapshot.
 * `restart` replaces it with a fresh deployment (reset, or a replay under another config).
 */
function useSimulation(initial: FormRequest) {
  const [sim, setSim] = useState<Simulation | undefined>(undefined);
  const [snapshot, setSnapshot] = useState<Snapshot | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(0);
  const current = useRef<Simulation | undefined>(undefined);

  const track = useCallback(<T,>(work: Promise<T>): Promise<T | undefined> => {
    setBusy((n) => n + 1);
    return work
      .catch((e: unknown) => {
        // Not a refusal or an invalid request (the simulation records those): a failure to run.
        console.error(e);
        setError(e instanceof Error ? e.message : String(e));
        return undefined;
      })
      .finally(() => setBusy((n) => n - 1));
  }, []);

  const restart = useCallback(
    (make: (lane: Lane) => Promise<Simulation>) =>
      track(
        (async () => {
          const next = await make(await openLane());
          current.current?.listen(() => {});
          current.current = next;
          next.listen((s) => {
            if (current.current === next) setSnapshot(s);
          });
          setSim(next);
          setSnapshot(next.snapshot());
        })(),
      ),
    [track],
  );

  const [initialConfig] = useState(initial.config);
  useEffect(() => {
    void restart((lane) => Simulation.start(lane, initialConfig));
  }, [restart, initialConfig]);

  return { sim, snapshot, error, busy: busy > 0, restart, track };
}

export function OfflinePlayground() {
  const [form, setForm] = useState<Form>(DEFAULT_FORM);
  const request = useMemo(() => requestOf(form), [form]);
  const { sim, snapshot, error, busy, restart, track } = useSimulation(request);
  const [waitSeconds, setWaitSeconds] = useState("1");

  const check = useMemo(() => (sim === undefined ? undefined : (r: FormRequest) => sim.check(r)), [sim]);
  // Re-checked whenever the state changes, so the preview of the next decision stays current.
  const refused = useMemo(() => formError(form), [form]);
  const validation = useValidation(request, check, snapshot, refused);
  const valid = validation.state === "ok" ? validation.request : undefined;

  // A valid config applies from the simulated instant it was entered at, as on a deployment.
  useEffect(() => {
    if (sim !== undefined && valid !== undefined) void track(sim.setConfig(valid.config));
  }, [sim, valid, track]);

  const fire = (n: number) => {
    if (sim !== undefined && valid !== undefined) void track(sim.fire(valid, n));
  };
  const wait = (ms: number) => {
    if (sim !== undefined) void track(sim.wait(ms));
  };
  const waitMs = Number(waitSeconds) * 1000;
  const waitValid = waitSeconds.trim() !== "" && Number.isFinite(waitMs) && waitMs > 0;
  const config = snapshot?.config;
  const entries = snapshot?.entries ?? [];
  const ready = sim !== undefined && snapshot !== undefined;
  const preview = validation.state === "ok" ? validation.result : undefined;
  // A valid config not yet applied (the effect above is about to): the chart is about to change.
  const pendingConfig = valid !== undefined && config !== undefined && JSON.stringify(valid.config) !== JSON.stringify(config);

  return (
    <div className="workbench">
      <section className="panel playground" aria-labelledby="playground-heading">
        <h2 id="playground-heading">Playground</h2>
        <p className="panel-note">
          Requests go to the rate limiter component itself, running in your browser on convex-test, through the
          app&apos;s <code>rateLimiter.limit</code>, at a simulated clock. As on a deployment, a call never runs
          before a commit it can see, so requests fired at once are decided two to a ms (0, 0, 1, 1, 2 ms). Changing
          the limit applies it from the current instant; <em>Replay</em> fires the same requests again under the
          new limit.
        </p>
        <PlaygroundForm form={form} validation={validation} onChange={setForm} />
        <div className="actions" role="group" aria-label="Traffic">
          <button type="button" onClick={() => fire(1)} disabled={!ready || valid === undefined}>
            Fire request
          </button>
          <button type="button" onClick={() => fire(BURST)} disabled={!ready || valid === undefined}>
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
          <button type="button" onClick={() => wait(waitMs)} disabled={!ready || !waitValid}>
            Wait
          </button>
          <button
            type="button"
            onClick={() => sim !== undefined && void track(sim.waitUntilFull())}
            disabled={!ready || !(snapshot.untilFull > 0)}
          >
            Wait until full
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              if (valid !== undefined && snapshot !== undefined) {
                const { entries: requests, clock } = snapshot;
                void restart((lane) => Simulation.replay(lane, valid.config, requests, clock));
              }
            }}
            disabled={!ready || valid === undefined || entries.length === 0}
          >
            Replay under this limit
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => config !== undefined && void restart((lane) => Simulation.start(lane, config))}
            disabled={!ready || (entries.length === 0 && snapshot.clock === 0)}
          >
            Reset
          </button>
        </div>
        <p className="clock" data-busy={busy || !ready || validation.state === "checking" || pendingConfig}>
          Simulated clock: <output data-testid="sim-clock">{formatDuration(snapshot?.clock ?? 0)}</output>
          {!ready && <span className="muted"> (starting the in-browser deployment…)</span>}
        </p>
        {preview !== undefined && snapshot !== undefined && (
          <p className="muted preview" data-testid="next-decision">
            Fired now, <code>check</code> says: {describe(outcomeOf(preview, snapshot.clock), snapshot.clock)}
            {(valid?.config.shards ?? 1) > 1 ? ` (drawing shards ${describeShards(preview.details.shards)})` : ""}.
          </p>
        )}
        {error !== undefined && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <DecisionLog entries={entries} origin={0} />
      </section>
      {config !== undefined && snapshot !== undefined && (
        <Monitor
          config={config}
          available={snapshot.available}
          past={snapshot.past}
          future={snapshot.future}
          from={0}
          to={snapshot.future.at(-1)?.t ?? snapshot.clock}
          now={snapshot.clock}
          origin={0}
          marks={marksOf(entries, 0)}
          changes={snapshot.changes}
        >
          <p className="panel-note">
            The tokens available as the component&apos;s <code>getValue</code> reports them at each simulated
            instant{(config.shards ?? 1) > 1 ? `, summed over all ${config.shards} shards` : ""}: solid up to the
            clock, dashed for what follows if no more requests come.
          </p>
        </Monitor>
      )}
    </div>
  );
}
