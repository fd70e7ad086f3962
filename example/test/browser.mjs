// @ts-check
// Browser test of the example UI: builds it with vite, serves it on 127.0.0.1 with vite preview,
// drives it in headless Chromium (playwright-core) and keeps a screenshot in test-artifacts/.
// Checks the offline what-if mode (banner, Playground decisions, the chart redrawing when the
// config changes, the chat's Send countdown), then that the live build renders without a backend.
// Run from the repository root: node example/test/browser.mjs
// Without /usr/bin/chromium it skips (exit 0), or fails when CI is set.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CHROMIUM = "/usr/bin/chromium";
const HOST = "127.0.0.1";
/** The whole run, build included, must finish within this (ms). */
const OVERALL_TIMEOUT = 180_000;
/** Each browser action or wait (ms). */
const STEP_TIMEOUT = 15_000;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const configFile = path.join(root, "example/vite.config.ts");
const artifacts = path.join(root, "test-artifacts");
const screenshot = path.join(artifacts, "playground.png");

if (!existsSync(CHROMIUM)) {
  if (process.env.CI) {
    console.error(`browser test: ${CHROMIUM} is missing; install it with: apt-get install -y chromium`);
    process.exit(1);
  }
  console.log(`browser test: skipped, ${CHROMIUM} is not installed (apt-get install -y chromium to run it)`);
  process.exit(0);
}

const watchdog = setTimeout(() => {
  console.error(`browser test: timed out after ${OVERALL_TIMEOUT / 1000} s`);
  process.exit(1);
}, OVERALL_TIMEOUT);
watchdog.unref();

const started = Date.now();
/** @param {string} message */
function log(message) {
  console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${message}`);
}

/**
 * Throws with `message` unless `condition` holds.
 * @param {unknown} condition
 * @param {string} message
 * @returns {asserts condition}
 */
function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
  log(`ok: ${message}`);
}

/** A free TCP port on 127.0.0.1, for a server that must not move elsewhere (strictPort). */
async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** @type {Array<() => Promise<void>>} */
const cleanups = [];
/** The page being tested, for a screenshot on failure. @type {import("playwright-core").Page | undefined} */
let current;

async function main() {
  const { build, preview } = await import("vite");
  const { chromium } = await import("playwright-core");

  /**
   * Builds the UI into `outDir`. `convexUrl` undefined builds offline mode; env files are ignored
   * so a developer's .env.local can't switch the test to a real deployment.
   * @param {string} outDir
   * @param {string | undefined} convexUrl
   */
  async function buildUi(outDir, convexUrl) {
    if (convexUrl === undefined) delete process.env.VITE_CONVEX_URL;
    else process.env.VITE_CONVEX_URL = convexUrl;
    await build({ configFile, envDir: false, logLevel: "warn", build: { outDir, emptyOutDir: true } });
    delete process.env.VITE_CONVEX_URL;
  }

  /**
   * Serves `outDir` on 127.0.0.1 and returns its URL.
   * @param {string} outDir
   */
  async function serve(outDir) {
    const port = await freePort();
    const server = await preview({
      configFile,
      envDir: false,
      logLevel: "warn",
      build: { outDir },
      preview: { host: HOST, port, strictPort: true, open: false },
    });
    cleanups.push(() => server.close());
    return `http://${HOST}:${port}/`;
  }

  const work = await mkdtemp(path.join(tmpdir(), "rate-limiter-browser-"));
  cleanups.push(() => rm(work, { recursive: true, force: true }));
  const offlineDir = path.join(work, "offline");
  const liveDir = path.join(work, "live");

  log("building the UI (offline mode)");
  await buildUi(offlineDir, undefined);
  const offlineUrl = await serve(offlineDir);
  log(`serving ${offlineUrl}`);

  const context = await chromium.launchPersistentContext(path.join(work, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--disable-quic",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 1000 },
    colorScheme: "light",
    timeout: STEP_TIMEOUT,
  });
  cleanups.push(() => context.close());
  context.setDefaultTimeout(STEP_TIMEOUT);
  log("chromium started");

  // Only 127.0.0.1 may be reached: the UI must need no network assets.
  /** @type {string[]} */
  const blocked = [];
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === HOST) return route.continue();
    blocked.push(url.href);
    return route.abort();
  });
  /** @type {string[]} */
  const errors = [];
  const page = await context.newPage();
  current = page;
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console error: ${message.text()}`);
  });

  // --- Offline mode --------------------------------------------------------------------------
  await page.goto(offlineUrl, { waitUntil: "load" });
  await page.getByRole("heading", { name: "Playground" }).waitFor();
  const banner = (await page.getByTestId("offline-banner").textContent()) ?? "";
  check(/live mode needs a deployment/i.test(banner), "the offline banner says live mode needs a deployment");
  check(banner.includes("npm run dev"), "the banner names npm run dev");

  const curve = page.getByTestId("monitor-curve");
  const projection = page.getByTestId("monitor-projection");
  const rows = page.locator('[data-testid="decision-log"] tbody tr');
  const marks = page.locator('[data-testid="monitor-chart"] .mark');
  /** The chart's two paths, as one string that changes whenever either is redrawn. */
  const chart = async () => `${await curve.getAttribute("d")}|${await projection.getAttribute("d")}`;
  /** The outcomes in the log, oldest first. */
  const outcomes = async () => (await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-outcome")))).reverse();
  /**
   * Waits until the chart differs from `before`.
   * @param {string} before
   */
  const redrawn = (before) =>
    page.waitForFunction(
      (prev) =>
        `${document.querySelector('[data-testid="monitor-curve"]')?.getAttribute("d")}|${document
          .querySelector('[data-testid="monitor-projection"]')
          ?.getAttribute("d")}` !== prev,
      before,
    );

  const initial = await chart();
  check(initial.length > 10, "the chart draws a curve before any request");

  // Default limit: 5 per 10 s, capacity 5. Three requests at t = 0 are admitted.
  const fire = page.getByRole("button", { name: "Fire request" });
  for (let i = 0; i < 3; i++) await fire.click();
  await rows.nth(2).waitFor();
  check((await outcomes()).join() === "admitted,admitted,admitted", "three requests are admitted");
  check((await marks.count()) === 3, "the chart marks the three requests");
  const afterFiring = await chart();
  check(afterFiring !== initial, "the chart redraws after requests");

  // What-if: with capacity 2 the same three requests replay, and the third is refused.
  await page.locator('input[name="capacity"]').fill("2");
  await redrawn(afterFiring);
  const capacity2 = await chart();
  check(capacity2 !== afterFiring, "the chart redraws when the capacity changes");
  await page.locator('[data-testid="decision-log"] tbody tr[data-outcome="refused"]').waitFor();
  check((await outcomes()).join() === "admitted,admitted,refused", "replayed with capacity 2, the third is refused");
  check((await page.locator(".mark-refused").count()) === 1, "the chart marks the refusal");

  // A bad config is named, and Fire is disabled until it is fixed; the chart keeps the last good one.
  await page.locator('input[name="shards"]').fill("9");
  const alert = page.getByRole("alert");
  await alert.waitFor();
  check(/config\.shards/.test((await alert.textContent()) ?? ""), "too many shards is refused with the field named");
  check(await fire.isDisabled(), "Fire is disabled while the config is invalid");
  check((await chart()) === capacity2, "the chart keeps the last valid config");
  await page.locator('input[name="shards"]').fill("1");
  await alert.waitFor({ state: "detached" });

  // Switching to a fixed window redraws the chart as steps.
  await page.getByLabel("Kind").selectOption("fixed window");
  await redrawn(capacity2);
  check((await projection.getAttribute("d"))?.includes("H") === true, "a fixed window is drawn as steps");

  // Simulated time: wait one second, then a burst of five at t = 1 s.
  const beforeWait = await chart();
  await page.getByRole("button", { name: "Wait", exact: true }).click();
  await page.getByTestId("sim-clock").filter({ hasText: /^1 s$/ }).waitFor();
  await redrawn(beforeWait);
  check((await page.getByTestId("sim-clock").textContent()) === "1 s", "waiting moves the simulated clock to 1 s");
  check((await chart()) !== beforeWait, "waiting redraws the chart");
  await page.getByRole("button", { name: "Fire 5 at once" }).click();
  await rows.nth(7).waitFor();
  const all = await outcomes();
  check(all.length === 8, "eight decisions are logged");
  check(all.every((o) => o === "admitted" || o === "refused"), "every decision is admitted or refused");
  check(all.slice(3).every((o) => o === "refused"), "within the same window, the burst is refused");
  const summary = (await page.getByTestId("decision-summary").textContent()) ?? "";
  check(summary.includes("8 requests"), `the summary counts the requests ("${summary}")`);
  check((await marks.count()) === 8, "the chart marks all eight");

  // Back to a token bucket with room for the burst, and reserve: debts show as reservations.
  await page.getByLabel("Kind").selectOption("token bucket");
  await page.locator('input[name="capacity"]').fill("");
  await page.locator('input[name="reserve"]').check();
  await page.getByRole("button", { name: "Fire 5 at once" }).click();
  await rows.nth(12).waitFor();
  check((await page.locator(".mark-reserved").count()) > 0, "reserving past the tokens left shows reservations");

  // The chat: three messages may go at once, then Send counts down.
  const message = page.getByRole("textbox", { name: "Message" });
  const send = page.locator(".chat-form button[type=submit]");
  for (let i = 1; i <= 3; i++) {
    await message.fill(`hello ${i}`);
    await send.click();
    await page.locator(".chat-messages li", { hasText: `hello ${i}` }).waitFor();
  }
  await message.fill("one too many");
  await page.waitForFunction(() => /^Wait \d+ s$/.test(document.querySelector(".chat-form button")?.textContent ?? ""));
  check(await send.isDisabled(), `after three messages Send is disabled ("${await send.textContent()}")`);

  // A scenario for the screenshot: reset, then bursts and waits on the default limit (5 per 10 s).
  await page.getByRole("button", { name: "Reset" }).click();
  await page.getByTestId("decision-summary").filter({ hasText: "No requests yet." }).waitFor();
  await page.locator('input[name="reserve"]').uncheck();
  const waitInput = page.getByRole("spinbutton", { name: "Wait (s)" });
  /** @type {Array<[number, number]>} seconds to wait, then requests to fire at once */
  const script = [
    [0, 5], // the full burst is admitted
    [1, 1], // 0.5 tokens: refused
    [2, 1], // 1.5 tokens: admitted
    [3, 5], // 2 tokens: two admitted, three refused
    [4, 1], // 2 tokens: admitted
    [3, 2], // 2.5 tokens: both admitted
  ];
  let fired = 0;
  for (const [seconds, n] of script) {
    if (seconds > 0) {
      await waitInput.fill(String(seconds));
      await page.getByRole("button", { name: "Wait", exact: true }).click();
    }
    for (let i = 0; i < n; i++) await fire.click();
    fired += n;
    await rows.nth(fired - 1).waitFor();
  }
  check(
    (await outcomes()).join() ===
      "admitted,admitted,admitted,admitted,admitted,refused,admitted,admitted,admitted,refused,refused,refused,admitted,admitted,admitted",
    "the scripted traffic gets the decisions the token bucket promises",
  );
  await page.getByTestId("sim-clock").filter({ hasText: /^13 s$/ }).waitFor();

  await mkdir(artifacts, { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  log(`screenshot: ${path.relative(root, screenshot)}`);

  // --- Live mode, without a backend -----------------------------------------------------------
  // A closed local port stands in for the deployment: the live tree must render, and wait.
  log("building the UI (live mode, pointed at a closed local port)");
  const closed = await freePort();
  await buildUi(liveDir, `http://${HOST}:${closed}`);
  const liveUrl = await serve(liveDir);
  const livePage = await context.newPage();
  livePage.on("pageerror", (error) => errors.push(`live page error: ${error.message}`));
  await livePage.goto(liveUrl, { waitUntil: "load" });
  await livePage.getByRole("heading", { name: "Playground" }).waitFor();
  check((await livePage.getByTestId("offline-banner").count()) === 0, "live mode shows no offline banner");
  check(
    (await livePage.locator(".chat-form button[type=submit]").textContent()) === "Loading…",
    "live Send waits for the limit to load",
  );

  check(errors.length === 0, `no page or console errors${errors.length ? `: ${errors.join("; ")}` : ""}`);
  check(blocked.length === 0, `no request left 127.0.0.1${blocked.length ? `: ${blocked.join(", ")}` : ""}`);
}

let failed = false;
try {
  await main();
  log("browser test passed");
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  if (current !== undefined) {
    const failure = path.join(artifacts, "browser-failure.png");
    await mkdir(artifacts, { recursive: true });
    await current.screenshot({ path: failure, fullPage: true }).then(
      () => console.error(`screenshot of the failure: ${path.relative(root, failure)}`),
      () => undefined,
    );
  }
  console.error("browser test FAILED");
} finally {
  for (const cleanup of cleanups.reverse()) {
    await cleanup().catch((error) => console.error(`cleanup: ${error}`));
  }
}
process.exit(failed ? 1 : 0);
