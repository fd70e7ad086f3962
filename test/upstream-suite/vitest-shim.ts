// What upstream's test files get for `import ... from "vitest"` (see plugin.ts): vitest itself,
// except that `test`/`it` look each test up in expected-failures.ts. A listed test passes only
// if it fails the way its entry says; one that passes, or fails some other way, fails the run.
import * as vitest from "vitest";
import type { RunnerTask, RunnerTestFile, RunnerTestSuite, TestContext } from "vitest";
import { expectedFor, listedNames, upstreamFile, type Listed } from "./expected-failures.js";
import { failureText, PROBE } from "./failure.js";

export * from "vitest";

declare module "vitest" {
  interface TaskMeta {
    /** Set on an upstream test that failed as its expected-failures.ts entry says. */
    upstreamExpected?: { section: Listed["section"]; why: string; readmeRow?: string };
  }
}

const probing = () => (globalThis as Record<symbol, unknown>)[PROBE] === true;

type TestFn = (context: TestContext) => unknown;

async function runListed(listed: Listed, name: string, fn: TestFn, context: TestContext): Promise<void> {
  let error: unknown;
  let failed = false;
  try {
    await fn(context);
  } catch (e) {
    error = e;
    failed = true;
  }
  const where = `test/upstream-suite/expected-failures.ts (${listed.section})`;
  if (!failed) {
    throw new Error(`"${name}" is listed in ${where} but passed: remove it from the list.`);
  }
  const text = failureText(error);
  if (!listed.because.test(text)) {
    throw new Error(
      `"${name}" is listed in ${where} as failing with ${listed.because}, but it failed with:\n${text}`,
      { cause: error },
    );
  }
  context.task.meta.upstreamExpected = {
    section: listed.section,
    why: listed.why,
    ...(listed.readmeRow === undefined ? {} : { readmeRow: listed.readmeRow }),
  };
  await context.annotate(`expected failure (${listed.section}): ${listed.why}`, "notice");
}

/** Upstream's `test(name, fn)`, with listed tests checked against their entries. */
function wrap(real: typeof vitest.test): typeof vitest.test {
  return new Proxy(real, {
    apply(target, thisArg, args: unknown[]) {
      if (probing()) return undefined;
      const i = args.findIndex((a) => typeof a === "function");
      if (i < 0) return Reflect.apply(target, thisArg, args);
      const fn = args[i] as TestFn;
      const wrapped = async (context: TestContext) => {
        const task = context.task;
        const name = `${upstreamFile(task.file.filepath)} > ${task.fullTestName ?? task.name}`;
        const listed = expectedFor(name);
        return listed ? runListed(listed, name, fn, context) : fn(context);
      };
      const copy = [...args];
      copy[i] = wrapped;
      return Reflect.apply(target, thisArg, copy);
    },
    get(target, key, receiver) {
      // While probing, `test.each(...)(...)` and the like register nothing either.
      return probing() ? inert : Reflect.get(target, key, receiver);
    },
  });
}

/** Callable, and every property and call result is itself: registers nothing while probing. */
const inert: typeof vitest.test = new Proxy(() => inert, { get: () => inert }) as unknown as typeof vitest.test;

export const test = wrap(vitest.test);
export const it = test;
export const describe: typeof vitest.describe = new Proxy(vitest.describe, {
  apply: (target, thisArg, args: unknown[]) => (probing() ? undefined : Reflect.apply(target, thisArg, args)),
  get: (target, key, receiver) => (probing() ? inert : Reflect.get(target, key, receiver)),
});
export const suite = describe;

function testsIn(task: RunnerTask): string[] {
  if (task.type === "test") return [task.fullTestName ?? task.name];
  return "tasks" in task ? task.tasks.flatMap(testsIn) : [];
}

if (!probing()) {
  // This module loads once per upstream test file, while vitest collects it: check that every
  // test the list names for this file exists in it (an upstream rename must not go unnoticed).
  // (vitest requires a destructuring pattern for the first, fixtures, parameter.)
  vitest.afterAll(({}, file: Readonly<RunnerTestSuite | RunnerTestFile>) => {
    const path = "filepath" in file ? file.filepath : file.file.filepath;
    const prefix = `${upstreamFile(path)} > `;
    const present = new Set(testsIn(file as RunnerTask).map((n) => prefix + n));
    const missing = listedNames().filter((n) => n.startsWith(prefix) && !present.has(n));
    if (missing.length > 0) {
      throw new Error(`expected-failures.ts lists tests this file doesn't have:\n${missing.join("\n")}`);
    }
  });
}
