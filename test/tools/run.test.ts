// tools/run.mjs as a user meets it through `npm run bench` and `npm run simulate`: a bad argument prints the usage and
// exits 2, with no stack trace (the entry throws a UsageError, tools/usage.ts).
// @vitest-environment node
import { execFile } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Runs `tools/run.mjs` with `args`, as an npm script does: its exit code and output. */
function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [join(root, "tools", "run.mjs"), ...args], { cwd: root, timeout: 120_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
    });
  });
}

test("npm run bench -- --only foo: the usage, exit 2, no stack", async () => {
  const { code, stdout, stderr } = await run(["bench/main.ts", "--only", "foo"]);
  expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
  expect(stderr).toMatch(/^--only: unknown section foo\nusage: npm run bench -- /);
  expect(stderr).not.toMatch(/\n\s+at /); // no stack frames
}, 150_000);

test("npm run simulate -- --bogus: the usage, exit 2, no stack", async () => {
  const { code, stdout, stderr } = await run(["bench/simulate.ts", "--bogus"]);
  expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
  expect(stderr).toMatch(/^unknown option --bogus\nusage: npm run simulate -- /);
  expect(stderr).not.toMatch(/\n\s+at /);
}, 150_000);
