// The Playground and Monitor against the deployment: requests go to `playground.request` in this
// tab's own lane, and the chart follows the lane's state through `playground.getRateLimit`,
// evolving it between updates with the shared `calculateRateLimit`. Times are server ms. The form
// is checked before sending by the component itself, run in the page (checkInPage.ts).
import { useMutation, useQuery } from "convex/react";
import { useSessionId } from "convex-helpers/react/sessions";
import { isInvalidRateLimitError, type GetValueReturns } from "convex-rate-limiter";
import { useServerOffset } from "convex-rate-limiter/react";
import { useMemo, useRef, useState } from "react";
import { api } from "../../convex/_generated/api.js";
import { Monitor } from "../monitor/Monitor.js";
import { curve, horizon, valueAt, type Segment } from "../monitor/model.js";
import { checkInPage } from "../playground/checkInPage.js";
import { DEFAULT_FORM, formError, requestOf, wholeConfig, type Form, type FormRequest } from "../playground/config.js";
import { DecisionLog, marksOf, outcomeOf, type Entry } from "../playground/decisions.js";
import { PlaygroundForm } from "../playground/PlaygroundForm.js";
import { useValidation } from "../playground/useValidation.js";
import { useNow } from "../useNow.js";

/** How many requests "Fire a burst" sends at once. */
const BURST = 5;
/** How much history (ms) the chart shows, and the most it projects ahead. */
const HISTORY = 60_000;
/** The most states and log entries kept. */
const MAX_KEPT = 500;

function errorText(error: unknown): string {
  if (isInvalidRateLimitError(error)) return error.data.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * A sliding window's `prev` for the whole limit, from getValue's result: exact unsharded; sharded,
 * only the emptiest shard's is returned, so the whole one is estimated as that shard's scaled to
 * the whole capacity (the chart's slope between boundaries is then an estimate; the boundaries,
 * and the instant the limit is full, are not).
 */
function wholePrev(data: GetValueReturns & { total?: { capacity: number } }): { prev?: number } {
  if (data.prev === undefined) return {};
  const shardCapacity = data.config.capacity ?? data.config.rate;
  const scale = data.total !== undefined && shardCapacity > 0 ? data.total.capacity / shardCapacity : 1;
  return { prev: data.prev * scale };
}

/**
 * An exact sliding window's log for the whole limit: unsharded, the row's own. Sharded, getValue
 * returns one shard's, so none: the chart then takes the limit's used tokens to come back a period
 * after the last reading (later than they will: the steps it shows are a lower bound).
 */
function wholeLog(data: GetValueReturns, sharded: boolean): { log?: ArrayBuffer } {
  return data.log === undefined || sharded ? {} : { log: data.log };
}

export function LivePlayground() {
  const [form, setForm] = useState<Form>(DEFAULT_FORM);
  const refused = useMemo(() => formError(form), [form]);
  const validation = useValidation(useMemo(() => requestOf(form), [form]), checkInPage, undefined, refused);
  const parsed: FormRequest | undefined = validation.state === "ok" ? validation.request : undefined;
  // The last valid config stays on the chart while a field is being retyped.
  const [lastGood, setLastGood] = useState<FormRequest | undefined>(undefined);
  if (parsed !== undefined && parsed !== lastGood) setLastGood(parsed);
  const shown = parsed ?? lastGood;
  const configKey = shown === undefined ? "" : JSON.stringify(shown.config);

  const [lane] = useSessionId();
  // 0 until measured: the chart is then off by the browser's clock error.
  const offset = useServerOffset(api.playground.getServerTime) ?? 0;
  const serverNow = useNow(200) + offset;
  const [started] = useState(() => Date.now());

  // Every shard is read, so `total` is the whole limit's value, not an estimate.
  const data = useQuery(
    api.playground.getRateLimit,
    shown === undefined || lane === undefined
      ? "skip"
      : { key: lane, config: shown.config, sampleShards: shown.config.shards ?? 1 },
  );

  // The states seen, each from when it took effect, for the current config only.
  const history = useRef<{ configKey: string; dataKey: string; segments: Segment[] }>({
    configKey: "",
    dataKey: "",
    segments: [],
  });
  if (history.current.configKey !== configKey) history.current = { configKey, dataKey: "", segments: [] };
  if (data !== undefined && shown !== undefined) {
    // An exact window's log is bytes, which JSON drops: its length stands in for it.
    const dataKey = JSON.stringify({ ...data, log: data.log?.byteLength });
    if (history.current.dataKey !== dataKey) {
      const state = { value: data.total?.value ?? data.value, ts: data.ts, ...wholePrev(data), ...wholeLog(data, (shown.config.shards ?? 1) > 1) };
      const arrived = Date.now() + offset;
      // A token bucket's or a sliding window's ts is the instant the query evaluated the row at; a
      // fixed window's is its window's start, so for those the state is placed at its arrival.
      const last = history.current.segments.at(-1)?.from ?? -Infinity;
      const from = Math.max(last, shown.config.kind === "fixed window" ? arrived : Math.min(data.ts, arrived));
      const segments = [...history.current.segments, { from, state }].slice(-MAX_KEPT);
      history.current = { configKey, dataKey, segments };
    }
  }
  const segments = history.current.segments;

  const [entries, setEntries] = useState<Entry[]>([]);
  const [since, setSince] = useState({ configKey, at: 0 });
  if (since.configKey !== configKey) setSince({ configKey, at: serverNow });
  const nextId = useRef(1);
  const [busy, setBusy] = useState(0);
  const [error, setError] = useState<string | undefined>(undefined);
  const request = useMutation(api.playground.request);
  const reset = useMutation(api.playground.reset);

  const fire = (n: number) => {
    if (parsed === undefined || lane === undefined) return;
    const { config, count, reserve } = parsed;
    setError(undefined);
    for (let i = 0; i < n; i++) {
      const id = nextId.current++;
      setBusy((b) => b + 1);
      request({ lane, config, count, reserve })
        .then((result) => {
          const entry: Entry = {
            id,
            t: result.at,
            count,
            reserve,
            outcome: outcomeOf(result, result.at),
            after: undefined,
            sharded: (config.shards ?? 1) > 1,
            ...(result.shards === undefined ? {} : { shards: result.shards }),
          };
          setEntries((es) => [...es, entry].slice(-MAX_KEPT));
        })
        .catch((err: unknown) => {
          const t = Date.now() + offset;
          const entry: Entry = { id, t, count, reserve, outcome: { kind: "invalid", message: errorText(err) }, after: undefined };
          setEntries((es) => [...es, entry].slice(-MAX_KEPT));
        })
        .finally(() => setBusy((b) => b - 1));
    }
  };

  const onReset = () => {
    if (parsed === undefined || lane === undefined) return;
    setError(undefined);
    reset({ lane, config: parsed.config }).then(
      () => {
        setEntries([]);
        setSince({ configKey, at: Date.now() + offset });
      },
      (err: unknown) => setError(errorText(err)),
    );
  };

  // A sliding window's windows start where the server put them (a phase hashed from the lane's
  // key, as `config.start` in what getValue returns); the model places them at `start`.
  const serverStart = data?.config.start;
  const whole =
    shown === undefined
      ? undefined
      : shown.config.kind === "sliding window" && typeof serverStart === "number"
        ? wholeConfig({ ...shown.config, start: serverStart })
        : wholeConfig(shown.config);
  // Tokens after each request, read off the states seen since (unknown until an update arrives).
  const logged = entries.map((e) =>
    whole !== undefined && e.outcome.kind !== "invalid" && segments.some((s) => s.from >= e.t)
      ? { ...e, after: valueAt(whole, segments, e.t) }
      : e,
  );
  const from = Math.max(started + offset, serverNow - HISTORY);
  const to = whole === undefined ? serverNow : horizon(whole, segments, from, serverNow, HISTORY);

  return (
    <div className="workbench">
      <section className="panel playground" aria-labelledby="playground-heading">
        <h2 id="playground-heading">Playground</h2>
        <p className="panel-note">
          Live: each request runs <code>rateLimiter.limit</code> on the deployment, in this tab's own lane of the
          playground limit. Changing the limit applies it to the lane's current state.
        </p>
        <PlaygroundForm form={form} validation={validation} onChange={setForm} />
        <div className="actions" role="group" aria-label="Traffic">
          <button type="button" onClick={() => fire(1)} disabled={parsed === undefined || lane === undefined}>
            Fire request
          </button>
          <button type="button" onClick={() => fire(BURST)} disabled={parsed === undefined || lane === undefined}>
            Fire {BURST} at once
          </button>
          <button type="button" className="secondary" onClick={onReset} disabled={parsed === undefined || lane === undefined}>
            Reset
          </button>
          {busy > 0 && <span className="muted">{busy} in flight…</span>}
        </div>
        {error !== undefined && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <DecisionLog entries={logged} origin={started + offset} />
      </section>
      {whole !== undefined && (
        <Monitor
          config={shown?.config ?? whole}
          available={valueAt(whole, segments, serverNow)}
          past={curve(whole, segments, from, serverNow)}
          future={curve(whole, segments, serverNow, to, false)}
          from={from}
          to={to}
          now={serverNow}
          origin={started + offset}
          marks={marksOf(
            logged.filter((e) => e.t >= since.at),
            started + offset,
          )}
        >
          <p className="panel-note">
            Live{data === undefined ? " (loading…)" : ""}: the last minute of this lane, in server time; the dashed line
            is the projection with no more requests.
            {(shown?.config.shards ?? 1) > 1 && " The value is the sum over all shards."}
          </p>
        </Monitor>
      )}
    </div>
  );
}
