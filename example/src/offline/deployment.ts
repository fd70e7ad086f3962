// A Convex deployment in the browser, for the offline UI: the example app's own functions and the
// rate limiter component (with its batch-worker child, as `register` installs them), run by
// convex-test, the same way the example's tests and `npm run demo` run them. Nothing is
// re-implemented: every decision the offline UI shows comes from the component's own code.
//
// Three things make convex-test work in a page (see also asyncHooks.ts and example/vite.config.ts):
// - Calls run one at a time (`Deployment.call` queues them), as the browser's stand-in for
//   `AsyncLocalStorage` requires.
// - The modules are imported before the first call, so no call waits on the network.
// - Time: each call reads the clock it is given. A simulated instant is served by a `Date` whose
//   "now" is that instant, swapped in for exactly the duration of the call, so the rest of the
//   page keeps the real clock.
import "./runtime.js";
import { convexTest, type TestConvex } from "convex-test";
import { register } from "convex-rate-limiter/test";
import { ADMIN_EMAILS } from "../../convex/admin.js";
import schema from "../../convex/schema.js";
import { Lane } from "./lane.js";

/** The example app's function modules, as convex-test wants them (its tests' glob, minus tests). */
const appGlob = import.meta.glob([
  "../../convex/**/*.ts",
  "../../convex/_generated/*.js",
  "!../../convex/**/*.test.ts",
  "!../../convex/**/*.d.ts",
  "!../../convex/test.setup.ts",
  "!../../convex/convex.config.ts",
]);

/**
 * The identity the offline admin view calls the app's admin queries with (`t.withIdentity`): signed
 * in with the first of the app's admin emails, so `requireAdmin` in admin.ts lets it through, as it
 * would a real admin on a deployment.
 */
export const OFFLINE_ADMIN = { subject: "offline-admin", name: "Offline admin", email: ADMIN_EMAILS[0]! };

/** A module map: path to loader, as `import.meta.glob` returns it. */
type Modules = Record<string, () => Promise<unknown>>;

/** A convex-test instance of the example app, with the rate limiter registered. */
export type Test = TestConvex<typeof schema>;

/**
 * The loaders of every module map handed to convex-test, by the map given. Each loader imports
 * its module once and then answers from memory: convex-test calls a function's loader on every
 * call, and a browser's `import()` of a loaded module still waits for a task, which would let
 * the page run in the middle of a call.
 */
const remembered = new WeakMap<Modules, Modules>();

function remember(modules: Modules): Modules {
  let out = remembered.get(modules);
  if (out === undefined) {
    out = Object.fromEntries(
      Object.entries(modules).map(([path, load]) => {
        let module: unknown;
        let loading: Promise<unknown> | undefined;
        const cached = (): Promise<unknown> => {
          if (loading === undefined) {
            loading = load().then((m) => (module = m));
            return loading;
          }
          return module === undefined ? loading : Promise.resolve(module);
        };
        return [path, cached];
      }),
    );
    remembered.set(modules, out);
  }
  return out;
}

/**
 * Imports every function module of a map up front, so no call waits on the network or a task.
 * Config and test files are skipped: they only run inside Convex or vitest.
 */
async function preload(modules: Modules): Promise<void> {
  const wanted = Object.entries(modules).filter(([path]) => !/convex\.config\.|\.test\.|\.test-d\./.test(path));
  await Promise.all(wanted.map(([, load]) => load()));
}

/** The queue every deployment's calls go through: one call at a time in the whole page. */
let tail: Promise<unknown> = Promise.resolve();

/** The real `Date`, and the instant the simulated one reads. */
const RealDate = Date;
let simulatedNow = 0;

/**
 * The `Date` a call at a simulated instant sees: the real one, except that `Date.now()` and
 * `new Date()` read that instant. Instances are real `Date`s (`instanceof Date` holds).
 */
class SimulatedDate extends RealDate {
  constructor(...args: ConstructorParameters<DateConstructor> | []) {
    if (args.length === 0) super(simulatedNow);
    else super(...(args as [string | number | Date]));
  }

  static override now(): number {
    return simulatedNow;
  }
}

/**
 * Reports a call that let the page run before it finished (see `remember`): the page would then
 * have seen convex-test's transaction globals, e.g. a `setTimeout` that throws.
 */
function watchTasks(): () => boolean {
  let ran = false;
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    ran = true;
    channel.port1.close();
  };
  channel.port2.postMessage(null);
  return () => ran;
}

/**
 * Deployment is one in-browser deployment of the example app. Each has its own database, so a
 * Playground reset or replay starts from an empty one.
 */
export class Deployment {
  readonly #t: Test;

  private constructor(t: Test) {
    this.#t = t;
  }

  /** open loads the modules (once per page) and starts a deployment with an empty database. */
  static async open(): Promise<Deployment> {
    const t = convexTest(schema, remember(appGlob));
    // `register` as the example's tests use it; every module map it hands over (the component's,
    // its batch-worker child's) is remembered and loaded before the first call.
    const maps: Modules[] = [remember(appGlob)];
    register({
      ...t,
      registerComponent: <ComponentApi = unknown>(name: string, componentSchema: Parameters<Test["registerComponent"]>[1], modules: Modules) => {
        const kept = remember(modules);
        maps.push(kept);
        return t.registerComponent<ComponentApi>(name, componentSchema, kept);
      },
    });
    await Promise.all(maps.map(preload));
    return new Deployment(t);
  }

  /**
   * call runs `fn` against this deployment, after every call made before it has finished. With
   * `at` (ms since the epoch), `Date` reads that instant inside the call; without it, the real
   * clock. Resolves or rejects with `fn`'s result.
   */
  call<T>(at: number | undefined, fn: (t: Test) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      const real = globalThis.Date;
      if (at !== undefined) {
        simulatedNow = at;
        globalThis.Date = SimulatedDate as DateConstructor;
      }
      const pageRan = watchTasks();
      try {
        return await fn(this.#t);
      } finally {
        globalThis.Date = real;
        if (pageRan()) console.error("offline deployment: the page ran in the middle of a call (a module was not preloaded?)");
      }
    };
    const result = tail.then(run, run);
    tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * nowOf returns the instant (ms) a call made at `at` runs at on `deployment`: `at`, or later when a
 * commit the call can see was made later (after two commits in one ms, the next ms), as on a real
 * deployment. It asks with a query, which commits nothing, so the answer holds until the next
 * mutation. A view on a simulated clock moves its clock there after traffic, so what it shows was
 * read at the instant it shows.
 */
export function nowOf(deployment: Deployment, at: number): Promise<number> {
  return deployment.call(at, (t) => t.query(async () => Date.now()));
}

/** openLane starts a deployment and returns the Playground's lane on it (see lane.ts). */
export async function openLane(): Promise<Lane> {
  const deployment = await Deployment.open();
  return new Lane((at, fn) => deployment.call(at, fn));
}
