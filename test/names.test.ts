// What tsc says about a misspelled limit name, word for word: each row is a call, compiled with the
// project's tsconfig in a file made of the rows (through the TypeScript compiler API), and the error
// reported on its line. A misspelled name must be the error, and the error must name it and list
// the names there are; a call that must compile has no error at all.
// @vitest-environment node
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, test } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The file the rows are compiled as; it never exists on disk. */
const fixture = join(root, "test", "names.fixture.ts");

const header = `
import type { GenericActionCtx, GenericDataModel, GenericMutationCtx, GenericQueryCtx } from "convex/server";
import { HOUR, MINUTE, RateLimiter, type RateLimitConfig } from "../src/client/index.js";
import type { ComponentApi } from "../src/component/_generated/component.js";
declare const component: ComponentApi;
declare const ctx: GenericMutationCtx<GenericDataModel>;
declare const queryCtx: GenericQueryCtx<GenericDataModel>;
declare const actionCtx: GenericActionCtx<GenericDataModel>;
const rateLimiter = new RateLimiter(component, {
  sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
  freeTrialSignUp: { kind: "fixed window", rate: 100, period: HOUR },
});
const bare = new RateLimiter(component);
const inline: RateLimitConfig = { kind: "token bucket", rate: 1, period: MINUTE };
const page = { numItems: 10, cursor: null };
void [queryCtx, actionCtx, bare, inline, page];
`;

const names = "the names are: 'sendMessage' | 'freeTrialSignUp' (or pass a config)";
const unknown = (name: string) => `unknown limit name '${name}'; ${names}`;
const argument = (name: string) =>
  `Argument of type '"${name}"' is not assignable to parameter of type '"${unknown(name)}"'.`;

/**
 * Each call, and the first line of the error tsc reports on it (undefined: it compiles), or a
 * pattern the whole message must match where its first line spells out a long type.
 */
const rows: Array<[call: string, error: string | RegExp | undefined]> = [
  // The three: each named "Expected 3 arguments" or "Property 'config' is missing" before.
  [
    `void rateLimiter.limit(ctx, "freeTrialSignup");`,
    // Differing only in case, the right name is suggested.
    `Argument of type '"freeTrialSignup"' is not assignable to parameter of type '"unknown limit name 'freeTrialSignup'; did you mean 'freeTrialSignUp'? The names are: 'sendMessage' | 'freeTrialSignUp' (or pass a config)"'.`,
  ],
  [`void rateLimiter.limit(ctx, "sendMesage", { key: "a" });`, argument("sendMesage")],
  [`rateLimiter.hookAPI("sendMesage");`, argument("sendMesage")],
  // Every other method that takes a name.
  [`void rateLimiter.check(queryCtx, "sendMesage");`, argument("sendMesage")],
  [`void rateLimiter.getValue(queryCtx, "sendMesage", { key: "a" });`, argument("sendMesage")],
  [`void rateLimiter.reset(ctx, "sendMesage");`, argument("sendMesage")],
  [`void rateLimiter.credit(ctx, "sendMesage", { count: 1 });`, argument("sendMesage")],
  [`void rateLimiter.listKeys(queryCtx, "sendMesage", { paginationOpts: page });`, argument("sendMesage")],
  [`void rateLimiter.metrics(queryCtx, "sendMesage", { from: 0, to: MINUTE });`, argument("sendMesage")],
  // In limitAll and checkAll the name is a field, and tsc suggests a near miss itself.
  [
    `void rateLimiter.limitAll(ctx, [{ name: "sendMessage" }, { name: "sendMesage", key: "a" }]);`,
    `Type '"sendMesage"' is not assignable to type '"sendMessage" | "freeTrialSignUp" | "${unknown("sendMesage")}"'. Did you mean '"sendMessage"'?`,
  ],
  [
    `void rateLimiter.checkAll(queryCtx, [{ name: "apiCals" }]);`,
    `Type '"apiCals"' is not assignable to type '"sendMessage" | "freeTrialSignUp" | "${unknown("apiCals")}"'.`,
  ],
  // A RateLimiter without names needs a config for every call, and says so.
  [
    `void bare.limit(ctx, "anything");`,
    `Argument of type '"anything"' is not assignable to parameter of type '"unknown limit name 'anything': this RateLimiter names no limits, so pass a config"'.`,
  ],
  // A named limit's config comes from the constructor.
  [
    `void rateLimiter.limit(ctx, "sendMessage", { key: "a", config: inline });`,
    /is not assignable to type '"'sendMessage' is named in the RateLimiter, which gives its config"'/,
  ],
  [
    `void rateLimiter.limit(ctx, "sendMessage", { config: inline });`,
    /is not assignable to type '"'sendMessage' is named in the RateLimiter, which gives its config"'/,
  ],
  [
    `void rateLimiter.limitAll(ctx, [{ name: "sendMessage", burst: 5 }]);`,
    `Type 'number' is not assignable to type '"'burst' is not an option of a request"'.`,
  ],
  // What must compile: named limits, and any other name with an inline config.
  [`void rateLimiter.limit(ctx, "sendMessage");`, undefined],
  [`void rateLimiter.limit(actionCtx, "freeTrialSignUp", { throws: true });`, undefined],
  [`void rateLimiter.limit(ctx, "adhoc", { key: "a", config: inline });`, undefined],
  [`void rateLimiter.limit(ctx, "adhoc", { config: { kind: "fixed window", rate: 5, period: HOUR } });`, undefined],
  [`void rateLimiter.check(queryCtx, "adhoc", { config: inline });`, undefined],
  [`void rateLimiter.getValue(queryCtx, "adhoc", { config: inline });`, undefined],
  [`void rateLimiter.reset(ctx, "adhoc", { key: "a", config: inline });`, undefined],
  [`void rateLimiter.credit(ctx, "adhoc", { count: 1, config: inline });`, undefined],
  [`void rateLimiter.listKeys(queryCtx, "adhoc", { paginationOpts: page, config: inline });`, undefined],
  [`void rateLimiter.metrics(queryCtx, "adhoc", { from: 0, to: MINUTE, config: inline });`, undefined],
  [`rateLimiter.hookAPI("adhoc", { config: inline });`, undefined],
  [`void rateLimiter.limitAll(ctx, [{ name: "sendMessage", key: "a" }, { name: "adhoc", config: inline, count: 2 }]);`, undefined],
  [`void bare.limit(ctx, "anything", { config: inline });`, undefined],
];

/** Each error tsc reports in the fixture, by 0-based line: its first line and the whole message. */
let errors = new Map<number, { first: string; whole: string }>();
const firstRow = header.split("\n").length - 1;

beforeAll(() => {
  const source = header + rows.map(([call]) => call).join("\n") + "\n";
  const configPath = join(root, "tsconfig.json");
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    },
  });
  if (parsed === undefined) throw new Error("tsconfig.json didn't parse");
  const options = { ...parsed.options, noEmit: true };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, ...rest) =>
    resolve(file) === fixture ? ts.createSourceFile(file, source, language) : getSourceFile(file, language, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => resolve(file) === fixture || fileExists(file);
  const program = ts.createProgram({ rootNames: [fixture], options, host });
  const file = program.getSourceFile(fixture);
  if (file === undefined) throw new Error("the fixture wasn't compiled");
  const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
  errors = new Map();
  for (const d of diagnostics) {
    const line = d.start === undefined ? -1 : file.getLineAndCharacterOfPosition(d.start).line;
    const whole = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    // The first line is what an editor shows first; tsc's elaboration below it is not pinned.
    if (!errors.has(line)) errors.set(line, { first: whole.split("\n")[0] ?? "", whole });
  }
}, 120_000);

describe("a misspelled limit name", () => {
  test("leaves the fixture's declarations without errors", () => {
    const outside = [...errors].filter(([line]) => line < firstRow || line >= firstRow + rows.length);
    expect(outside).toEqual([]);
  });

  test.each(rows.map(([call, error], i) => [call, error, firstRow + i] as const))("%s", (_, error, line) => {
    const reported = errors.get(line);
    if (error instanceof RegExp) expect(reported?.whole).toMatch(error);
    else expect(reported?.first).toBe(error);
  });
});
