// @ts-check
// Browser test of the example UI: builds it with vite, serves it on 127.0.0.1 with vite preview,
// drives it in headless Chromium (playwright-core) and keeps a screenshot in test-artifacts/.
// Checks the offline mode, where the example app and the rate limiter component run in the page:
// first the Monitor's admin view on a page of its own (keys a page at a time and the metrics
// chart, from the app's admin queries; a key blocked from its form: listed, marked in the Keys
// table, its calls refused and counted, removed again, the form naming the limit each time; and
// at phone width, 390 px, nothing sideways: no scrolling, every override's Remove whole); then the
// main page (the banner; Playground decisions, shards and form errors as the component gives
// them, each at the instant the deployment decided it, two to a ms, with the clock following to
// the ms; config changes, replays and long waits on the chart, and a burst's refusals a ms apart
// drawn as one mark, "×3"; a sliding window's form, decisions and chart (exact: steps;
// approximate: straight lines); the chat's Send countdown and its contrast;
// the form naming a blank or too-large number and saying what a peek or a fraction does), the
// Monitor's and the admin chart's labels at phone width (390 px: 11 px or more, inside, apart), the
// demo's HTML report at phone width (the same, and no note over the plot), and that the live build
// renders without a backend, its header saying the deployment can't be reached. Any page or
// console error fails it (a missing favicon included), but live mode's refused websocket.
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

/**
 * Writes `ms` as the UI writes a duration under 2 minutes: seconds, to the ms ("1.001 s").
 * @param {number} ms
 */
function seconds(ms) {
  return `${(Math.round(ms) / 1000).toLocaleString("en-US", { maximumFractionDigits: 3 })} s`;
}

/**
 * Writes `v` tokens as the UI does: at most 2 decimals ("0.01").
 * @param {number} v
 */
function tokens(v) {
  return (Math.round(v * 100) / 100 + 0).toLocaleString("en-US", { maximumFractionDigits: 2 });
}

/**
 * The ms a duration written in seconds stands for ("1.001 s": 1001), or NaN for other text.
 * @param {string | null | undefined} text
 */
function msOf(text) {
  const m = /^(-?\d+(?:\.\d{1,3})?) s$/.exec(text ?? "");
  return m === null ? NaN : Math.round(Number(m[1]) * 1000);
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

/**
 * The WCAG contrast ratio of an element's text against what is behind it, computed in the page
 * from its styles: the text colour over its background, over its ancestors' backgrounds, with the
 * element's and its ancestors' opacity applied (1 to 21; AA asks ≥ 4.5 for normal text).
 * @param {Element} el
 */
function contrastOf(el) {
  /** @param {string} css @returns {[number, number, number, number]} */
  const rgba = (css) => {
    const m = css.match(/rgba?\(([^)]+)\)/);
    if (!m || m[1] === undefined) throw new Error(`unexpected colour ${css}`);
    const [r = 0, g = 0, b = 0, a = 1] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [r, g, b, a];
  };
  /** @param {number[]} top @param {number[]} bottom */
  const over = (top, bottom) => {
    const a = top[3] ?? 1;
    return [0, 1, 2].map((i) => (top[i] ?? 0) * a + (bottom[i] ?? 0) * (1 - a)).concat(1);
  };
  // What the element is drawn on: its ancestors' backgrounds from the page down.
  const chain = [];
  for (let e = el.parentElement; e !== null; e = e.parentElement) chain.unshift(e);
  let behind = [255, 255, 255, 1];
  for (const e of chain) behind = over(rgba(getComputedStyle(e).backgroundColor), behind);
  let opacity = 1;
  for (let e = /** @type {Element | null} */ (el); e !== null; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
  const style = getComputedStyle(el);
  const bgTop = rgba(style.backgroundColor);
  const background = over([bgTop[0], bgTop[1], bgTop[2], (bgTop[3] ?? 1) * opacity], behind);
  const fgTop = rgba(style.color);
  const text = over([fgTop[0], fgTop[1], fgTop[2], (fgTop[3] ?? 1) * opacity], background);
  /** @param {number[]} c */
  const luminance = (c) => {
    const [r = 0, g = 0, b = 0] = c.map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [luminance(text), luminance(background)].sort((a, b) => b - a);
  return ((hi ?? 0) + 0.05) / ((lo ?? 0) + 0.05);
}

/**
 * The labels of each chart matching `selector` that is shown (has a size), measured in the page:
 * the smallest text's size on screen (its font size times the SVG's scale), the labels lying
 * outside the chart, the pairs that overlap, and the notes (`text.note`) over the plot area
 * (`rect.plot`), where the curve is drawn.
 * @param {string} selector
 */
function labelsOf(selector) {
  return [...document.querySelectorAll(selector)]
    .map((el) => /** @type {SVGSVGElement} */ (/** @type {unknown} */ (el)))
    .filter((svg) => svg.getBoundingClientRect().width > 0)
    .map((svg) => {
      const frame = svg.getBoundingClientRect();
      const texts = [...svg.querySelectorAll("text")].filter((t) => (t.textContent ?? "").trim() !== "");
      const scale = frame.width / svg.viewBox.baseVal.width;
      const smallest = Math.min(...texts.map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));
      const outside = texts
        .filter((t) => {
          const r = t.getBoundingClientRect();
          return r.left < frame.left - 0.5 || r.right > frame.right + 0.5 || r.top < frame.top - 0.5 || r.bottom > frame.bottom + 0.5;
        })
        .map((t) => t.textContent ?? "");
      const boxes = texts.map((t) => ({ r: t.getBoundingClientRect(), text: t.textContent ?? "" }));
      /** @param {DOMRect} a @param {DOMRect} b */
      const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      const overlapping = boxes.flatMap((a, i) =>
        boxes
          .slice(i + 1)
          .filter((b) => meet(a.r, b.r))
          .map((b) => `${a.text} / ${b.text}`),
      );
      const plot = svg.querySelector("rect.plot")?.getBoundingClientRect();
      const notesOnPlot =
        plot === undefined
          ? []
          : [...svg.querySelectorAll("text.note")].filter((t) => meet(t.getBoundingClientRect(), plot)).map((t) => t.textContent ?? "");
      const name = svg.dataset.testid === "metrics-chart" ? "admin chart" : svg.dataset.testid === "monitor-chart" ? "Monitor chart" : "chart";
      return { name, smallest, outside, overlapping, notesOnPlot };
    });
}

/**
 * What sticks out sideways at the page's width inside `root`: each element shown (more than 1 px
 * each way) drawn past the viewport's left or right edge, and each that scrolls or clips its
 * content sideways (its content wider than its box), as "tag.class: why".
 * @param {Element} root
 */
function sidewaysOf(root) {
  const width = document.documentElement.clientWidth;
  const name = (/** @type {Element} */ e) => `${e.tagName.toLowerCase()}${e.classList.length > 0 ? `.${[...e.classList].join(".")}` : ""}`;
  const out = [];
  for (const e of [root, ...root.querySelectorAll("*")]) {
    const r = e.getBoundingClientRect();
    // Not drawn, or visually hidden for screen readers (1 px, clipped): nothing to see sideways.
    if (r.width <= 1 || r.height <= 1) continue;
    if (r.left < -0.5 || r.right > width + 0.5) out.push(`${name(e)}: drawn from ${r.left.toFixed(0)} to ${r.right.toFixed(0)} px`);
    const overflow = getComputedStyle(e).overflowX;
    if (overflow !== "visible" && e.scrollWidth > e.clientWidth + 1) out.push(`${name(e)}: scrolls ${e.scrollWidth - e.clientWidth} px sideways`);
  }
  return out;
}

/**
 * How much of `el` is hidden sideways (px): cut by the viewport's edges or by an ancestor that
 * clips or scrolls its overflow. 0 when it is shown whole.
 * @param {Element} el
 */
function cutOf(el) {
  const r = el.getBoundingClientRect();
  let left = 0;
  let right = document.documentElement.clientWidth;
  for (let a = el.parentElement; a !== null; a = a.parentElement) {
    if (getComputedStyle(a).overflowX === "visible") continue;
    const b = a.getBoundingClientRect();
    left = Math.max(left, b.left + a.clientLeft);
    right = Math.min(right, b.left + a.clientLeft + a.clientWidth);
  }
  return Math.max(0, left - r.left) + Math.max(0, r.right - right);
}

/**
 * Checks the Monitor's admin view offline on `page`: the app's admin queries and mutations run in
 * the page, signed in as the offline admin, on the view's own simulated clock. Traffic, its
 * totals and chart, keys a page at a time, a block from the form (listed, marked on the key's row,
 * its calls refused and counted, removed again), the statuses naming the limit, and at phone width
 * (390 px) nothing sideways: no scrolling, every override's Remove whole.
 * @param {import("playwright-core").Page} page
 * @param {string} url
 */
async function checkAdmin(page, url) {
  await page.goto(url, { waitUntil: "load" });
  const admin = page.getByTestId("admin-view");
  const adminSettled = () => page.locator('[data-testid="admin-clock"][data-busy="false"]').waitFor();
  await adminSettled();
  // The menu opens on the limit the API buttons take from, so their first click shows.
  const limitMenu = admin.getByTestId("admin-limit");
  check(
    (await limitMenu.inputValue()) === "apiKeyRequests",
    `the Limit menu opens on apiKeyRequests, where the API calls land (${await limitMenu.inputValue()})`,
  );
  await admin.getByTestId("admin-no-keys").waitFor();
  const apiKey = admin.getByTestId("admin-api-key");
  const callThrice = admin.getByRole("button", { name: "Call it 3 times" });
  // key-a: 6 calls, 5 a minute, so one refused; key-b, key-c and key-d: one each.
  await callThrice.click();
  await adminSettled();
  await callThrice.click();
  await adminSettled();
  for (const key of ["key-b", "key-c", "key-d"]) {
    await apiKey.selectOption(key);
    await admin.getByRole("button", { name: "Call the API", exact: true }).click();
    await adminSettled();
  }
  const totals = admin.getByTestId("admin-totals");
  await totals.filter({ hasText: "8 admitted, 0 reserved, 1 refused" }).waitFor();
  check(/9 not folded yet/.test((await totals.textContent()) ?? ""), "the admin totals count events not yet folded");
  const bar = admin.locator('[data-testid="metrics-chart"] [data-admitted="8"][data-refused="1"]');
  check((await bar.count()) === 1 && (await bar.locator("rect").count()) === 2, "the metrics chart stacks this minute's 8 admitted and 1 refused");
  check(((await admin.getByTestId("admin-top").textContent()) ?? "").startsWith("key-a: 1 refused"), "key-a is the top offender");
  const keyRows = admin.locator('[data-testid="admin-keys"] tbody tr');
  check((await keyRows.count()) === 3, "the key listing shows its first page of 3 keys");
  await admin.getByRole("button", { name: "Load more keys" }).click();
  await keyRows.nth(3).waitFor();
  check((await admin.getByRole("button", { name: "Load more keys" }).count()) === 0, "the next page brings the fourth key, and no more to load");
  // The deployment's clock moves with its commits, a ms every two at one instant (convex-test
  // 0.0.70, as a deployment's): the traffic's 9 transactions ran at 0, 0, 1, 1, 2, 2 (key-a's
  // fifth token, its last), 3, 3 and 4 ms past 09:00, and the view reads at 5 ms, where it caught up.
  check(
    (await keyRows.first().textContent()) === "key-a0 of 5in 59.997 s",
    `key-a has 0 of 5 tokens, full again a minute after its last take (${await keyRows.first().textContent()})`,
  );
  // A minute later the cron's fold has run: the same counts, now from summaries.
  await admin.getByRole("button", { name: "Wait 1 min" }).click();
  await adminSettled();
  await totals
    .filter({ hasText: /^8 admitted, 0 reserved, 1 refused in the last 10 minutes; 0 decided under an override, 0 refused by a block or lockout\.$/ })
    .waitFor();
  log("ok: after the fold the totals stand, with nothing left unfolded");
  for (const scheme of /** @type {const} */ (["light", "dark"])) {
    await page.emulateMedia({ colorScheme: scheme });
    const ratio = await keyRows.first().locator("td").nth(2).evaluate(contrastOf);
    check(ratio >= 4.5, `the key table's text has contrast ${ratio.toFixed(2)}:1 (WCAG AA ≥ 4.5) in the ${scheme} scheme`);
  }
  await page.emulateMedia({ colorScheme: "light" });
  // Each traffic button shows the limit it takes from: the LLM reservation shows llmTokens, with
  // its one request admitted; the menu takes the view back to apiKeyRequests.
  await admin.getByRole("button", { name: "Reserve 30,000 LLM tokens" }).click();
  await adminSettled();
  await totals.filter({ hasText: /^1 admitted, 0 reserved, 0 refused/ }).waitFor();
  check((await limitMenu.inputValue()) === "llmTokens", "Reserve LLM tokens shows llmTokens, where it took 30,000");
  await limitMenu.selectOption("apiKeyRequests");
  await totals.filter({ hasText: /^8 admitted, 0 reserved, 1 refused/ }).waitFor();

  // Overrides: block key-b from the form (admin.setRateLimitOverride) for 5 minutes of the
  // simulated clock; it is listed, its next call is refused by the block and counted as such, and
  // Remove (admin.removeRateLimitOverride) lets it through again.
  await admin.getByTestId("admin-no-overrides").waitFor();
  await admin.getByTestId("admin-block-key").fill("key-b");
  await admin.getByTestId("admin-block-note").fill("browser test");
  await admin.getByRole("button", { name: "Block", exact: true }).click();
  await adminSettled();
  const overrideRows = admin.locator('[data-testid="admin-overrides"] tbody tr');
  await overrideRows.first().waitFor();
  check(
    (await overrideRows.count()) === 1 &&
      (await overrideRows.first().textContent()) === "key key-bblocked until 09:06:00 UTCbrowser test09:01:00 UTCRemove",
    `the block is listed with its end, note and when it was set (${await overrideRows.first().textContent()})`,
  );
  const status = admin.getByTestId("admin-override-status");
  check(
    (await status.textContent()) === "Blocked key-b of apiKeyRequests until 09:06:00 UTC.",
    `the form says which limit key-b is blocked from, and until when ("${await status.textContent()}")`,
  );
  // The Keys table marks key-b, whose tokens read full while its calls are refused, and no other.
  const blockedRow = keyRows.filter({ has: page.locator("code", { hasText: /^key-b$/ }) });
  await blockedRow.locator('[data-testid="admin-key-blocked"]').waitFor();
  check(
    (await blockedRow.getAttribute("data-blocked")) === "true" &&
      (await blockedRow.textContent()) === "key-b blocked until 09:06:00 UTC5 of 5full" &&
      (await admin.locator('[data-testid="admin-keys"] tr[data-blocked="true"]').count()) === 1,
    `the Keys table marks key-b blocked, and only key-b ("${await blockedRow.textContent()}")`,
  );

  // At phone width nothing in the admin view goes sideways: the overrides are cards, each Remove
  // shown whole (it was cut to "Re" in a table scrolling sideways, with nothing to say so).
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction(() => document.documentElement.clientWidth <= 390);
  const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  check(pageWidth <= 390, `at 390 px the page doesn't scroll sideways (${pageWidth} px wide)`);
  const sideways = await admin.evaluate(sidewaysOf);
  check(sideways.length === 0, `at 390 px nothing in the admin view scrolls or is drawn sideways${sideways.map((t) => ` (${t})`).join("")}`);
  const removeButton = admin.getByRole("button", { name: "Remove the override of key key-b" });
  const cut = await removeButton.evaluate(cutOf);
  const removeBox = await removeButton.boundingBox();
  check(
    cut === 0 && removeBox !== null && removeBox.x >= 0 && removeBox.x + removeBox.width <= 390 && (await removeButton.textContent()) === "Remove",
    `at 390 px the override's Remove button is shown whole (${cut.toFixed(1)} px cut)`,
  );
  check(
    (await overrideRows.first().locator("td").nth(2).evaluate((td) => getComputedStyle(td, "::before").content)) === '"note: "',
    "at 390 px an override's note is labelled, its header hidden",
  );
  await mkdir(artifacts, { recursive: true });
  await page.screenshot({ path: path.join(artifacts, "admin-390.png"), fullPage: true });
  log(`screenshot: ${path.relative(root, path.join(artifacts, "admin-390.png"))}`);
  await page.setViewportSize({ width: 1280, height: 1000 });

  // Called from the llmTokens view, the API shows apiKeyRequests again, where the call lands.
  await limitMenu.selectOption("llmTokens");
  await totals.filter({ hasText: /^1 admitted, 0 reserved, 0 refused/ }).waitFor();
  await apiKey.selectOption("key-b");
  const callOnce = admin.getByRole("button", { name: "Call the API", exact: true });
  await callOnce.click();
  await adminSettled();
  check((await limitMenu.inputValue()) === "apiKeyRequests", "Call the API shows apiKeyRequests, where it took from");
  await totals.filter({ hasText: "8 admitted, 0 reserved, 2 refused" }).waitFor();
  check(/1 refused by a block or lockout\.$/.test((await totals.textContent()) ?? ""), "key-b's call is refused by the block, and counted as blocked");
  await removeButton.click();
  await adminSettled();
  await admin.getByTestId("admin-no-overrides").waitFor();
  check(
    (await status.textContent()) === "Removed the override of key key-b of apiKeyRequests.",
    `the form says which limit's override was removed ("${await status.textContent()}")`,
  );
  await admin.locator('[data-testid="admin-keys"] tr[data-blocked="true"]').waitFor({ state: "detached" });
  log("ok: once the block is removed, key-b's row is no longer marked");
  await callOnce.click();
  await adminSettled();
  await totals.filter({ hasText: "9 admitted, 0 reserved, 2 refused" }).waitFor();
  log("ok: once the block is removed, key-b's next call is admitted");
  await page.close();
}

/**
 * Renders a demo report with example/demo/report.ts, loaded through vite's module runner (Node
 * can't load TypeScript), from results shaped like the demo's: a bucket near its capacity, a
 * budget deep in reserved debt with all four lanes, and a hot limit with over a thousand events.
 * @returns {Promise<string>}
 */
async function renderDemoReport() {
  const { createServer, createServerModuleRunner } = await import("vite");
  const server = await createServer({
    root,
    configFile: false,
    logLevel: "warn",
    server: { middlewareMode: true, hmr: false, ws: false, watch: null },
    appType: "custom",
    optimizeDeps: { noDiscovery: true, include: [] },
  });
  const runner = createServerModuleRunner(server.environments.ssr, { hmr: false });
  try {
    const { renderReport } = await runner.import(path.join(root, "example/demo/report.ts"));
    const T0 = Date.UTC(2025, 0, 1, 9, 20);
    /** @param {number} n @param {number} span @param {import("../demo/types.js").MarkKind} kind */
    const marks = (n, span, kind) => Array.from({ length: n }, (_, i) => ({ at: T0 + Math.floor((i * span) / n), kind }));
    /** @param {number} n @param {number} span @param {(i: number) => number} value */
    const points = (n, span, value) => Array.from({ length: n }, (_, i) => ({ at: T0 + (i * span) / n, value: value(i) }));
    /**
     * @param {string} id
     * @param {import("../demo/types.js").ChartData} chart
     */
    const scenario = (id, chart) => ({
      id,
      title: `${id}: a scenario with a long enough title to wrap on a phone`,
      about: ["What ran, in a sentence or two, naming functions like messages.getRateLimit + calculateRateLimit."],
      chart,
      summary: [{ label: "refusal waits", value: "mean 4.5s, max 4.8s", note: "retryAfter, until a token is back" }],
      checks: [{ name: "never over capacity + rate x time", ok: true, detail: "the fullest interval stayed 11.30 tokens under it" }],
      calls: 100,
      wallMs: 50,
    });
    return renderReport(
      [
        scenario("messages", {
          title: "tokens of sendMessage for alice",
          start: T0,
          end: T0 + 120_000,
          capacity: 3,
          points: points(300, 120_000, (i) => (i % 50) / 16),
          marks: [...marks(19, 120_000, "admitted"), ...marks(5, 120_000, "refused")],
        }),
        scenario("llm", {
          title: "tokens of llmTokens (below 0: reserved ahead)",
          start: T0,
          end: T0 + 480_000,
          capacity: 40_000,
          floor: -200_000,
          points: points(300, 480_000, (i) => 40_000 - 800 * Math.min(i, 300 - i)),
          marks: [...marks(8, 60_000, "admitted"), ...marks(35, 180_000, "reserved"), ...marks(43, 480_000, "ran"), ...marks(3, 9_000, "refused")],
        }),
        scenario("api", {
          title: "tokens of apiCalls (all shards together)",
          start: T0,
          end: T0 + 15_000,
          capacity: 100,
          points: points(300, 15_000, (i) => (i * 37) % 100),
          marks: [...marks(1234, 15_000, "admitted"), ...marks(608, 15_000, "refused")],
        }),
        // Three charts in one section, as the seam scenario draws the same traffic under three limits.
        (() => {
          /** @param {string} kind @param {number} admitted */
          const seamChart = (kind, admitted) => ({
            title: `tokens of outboundEmails (${kind})`,
            start: T0,
            end: T0 + 6_000_000,
            capacity: 100,
            points: points(150, 6_000_000, (i) => (i < 40 ? 100 : Math.min(100, (i - 40) * 1.1))),
            marks: [...marks(admitted, 60_000, "admitted"), ...marks(240 - admitted, 60_000, "refused")],
          });
          return {
            ...scenario("seam", seamChart("fixed window", 200)),
            alongside: [seamChart("sliding window", 100), seamChart("token bucket", 101)],
          };
        })(),
        // A concurrency limit: free slots, not tokens (its own axis title).
        scenario("generations", {
          title: "free slots of llmGenerations for ada",
          axis: "free slots",
          start: T0,
          end: T0 + 180_000,
          capacity: 2,
          points: points(300, 180_000, (i) => (i < 70 ? 1 : i < 200 ? 0 : 2)),
          marks: [...marks(8, 180_000, "admitted"), ...marks(4, 180_000, "ran"), ...marks(11, 120_000, "refused")],
        }),
      ],
      { command: "npm run demo -- --fast", seed: 1, clockStart: T0, wallMs: 3000, calls: 4758 },
    );
  } finally {
    await runner.close();
    await server.close();
  }
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
  /** A new page whose errors fail the test, the one a failure's screenshot is taken of. */
  const openPage = async () => {
    const opened = await context.newPage();
    current = opened;
    opened.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
    opened.on("console", (message) => {
      if (message.type() === "error") errors.push(`console error: ${message.text()}`);
    });
    // A failed load (a missing /favicon.ico, say) is an error even where Chromium logs nothing.
    opened.on("response", (response) => {
      if (response.status() >= 400) errors.push(`HTTP ${response.status()}: ${response.url()}`);
    });
    return opened;
  };

  // --- The Monitor's admin view, offline -----------------------------------------------------
  // On its own page, so its in-browser deployment and clock start fresh whatever the Playground did.
  await checkAdmin(await openPage(), offlineUrl);

  // --- Offline mode --------------------------------------------------------------------------
  const page = await openPage();
  await page.goto(offlineUrl, { waitUntil: "load" });
  await page.getByRole("heading", { name: "Playground" }).waitFor();
  const banner = (await page.getByTestId("offline-banner").textContent()) ?? "";
  check(/live mode needs a deployment/i.test(banner), "the offline banner says live mode needs a deployment");
  check(banner.includes("npm run dev"), "the banner names npm run dev");
  // vite preview answers a missing file with index.html, so the icon must be checked to be one.
  const icon = await page.evaluate(async () => {
    const link = document.querySelector('link[rel~="icon"]');
    if (!(link instanceof HTMLLinkElement)) return "no <link rel=icon>";
    const response = await fetch(link.href);
    return `${response.status} ${response.headers.get("content-type")}`;
  });
  check(icon === "200 image/svg+xml", `the page has a favicon (${icon})`);

  const curve = page.getByTestId("monitor-curve");
  const projection = page.getByTestId("monitor-projection");
  const rows = page.locator('[data-testid="decision-log"] tbody tr');
  const marks = page.locator('[data-testid="monitor-chart"] .mark');
  const readout = page.getByTestId("monitor-readout");
  /** Waits until the in-browser deployment has answered everything asked of it. */
  const settled = () => page.locator('.clock[data-busy="false"]').waitFor();
  /** The chart's two paths, as one string that changes whenever either is redrawn. */
  const chart = async () => `${await curve.getAttribute("d")}|${await projection.getAttribute("d")}`;
  /** The outcomes in the log, oldest first. */
  const outcomes = async () => (await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-outcome")))).reverse();
  /** The instants (ms) the log says each request was decided at, oldest first. */
  const instants = async () =>
    (await rows.evaluateAll((trs) => trs.map((tr) => tr.querySelector("td:nth-child(2)")?.textContent ?? ""))).reverse().map(msOf);
  const simClock = page.getByTestId("sim-clock");
  /**
   * Waits until the simulated clock reads `ms`, as the UI writes it (to the ms).
   * @param {number} ms
   */
  const clockReads = (ms) => simClock.filter({ hasText: new RegExp(`^${seconds(ms).replace(/\./g, "\\.")}$`) }).waitFor();
  /**
   * Fills a form field and waits for the component's verdict on the new request.
   * @param {string} name
   * @param {string} value
   */
  const setField = async (name, value) => {
    await page.locator(`input[name="${name}"]`).fill(value);
    await settled();
  };

  await settled();
  const initial = await chart();
  check(((await projection.getAttribute("d")) ?? "").length > 5, "the chart projects the limit before any request");

  // Default limit: 5 per 10 s, capacity 5. Three requests at t = 0 are admitted.
  const fire = page.getByRole("button", { name: "Fire request" });
  for (let i = 0; i < 3; i++) await fire.click();
  await rows.nth(2).waitFor();
  await settled();
  check((await outcomes()).join() === "admitted,admitted,admitted", "three requests are admitted");
  // A deployment's clock never runs before a commit it can see: it decides two requests in a ms,
  // then moves to the next, so requests fired at once from 0 are decided at 0, 0, 1, 1, 2 ms, and
  // the simulated clock follows.
  check((await instants()).join() === "0,0,1", `the three are decided at 0, 0 and 1 ms (${(await instants()).join(", ")})`);
  check((await marks.count()) === 3, "the chart marks the three requests");
  const afterFiring = await chart();
  check(afterFiring !== initial, "the chart redraws after requests");
  check((await readout.textContent())?.startsWith("2 of 5 tokens") === true, "the readout says 2 of 5 tokens are left");

  // A config change applies from now on, as on a deployment: the row still holds 2 tokens.
  await setField("capacity", "2");
  check((await readout.textContent())?.startsWith("2 of 2 tokens") === true, "with capacity 2 the same row reads 2 of 2");
  check((await chart()) !== afterFiring, "the chart redraws when the capacity changes");
  // What-if: replayed under capacity 2 from the start, the third of the same requests is refused.
  await page.getByRole("button", { name: "Replay under this limit" }).click();
  await page.locator('[data-testid="decision-log"] tbody tr[data-outcome="refused"]').waitFor();
  await settled();
  check((await outcomes()).join() === "admitted,admitted,refused", "replayed with capacity 2, the third is refused");
  check((await instants()).join() === "0,0,1", `the replay decides them at the same instants (${(await instants()).join(", ")})`);
  check((await page.locator(".mark-refused").count()) === 1, "the chart marks the refusal");
  const capacity2 = await chart();

  // A bad config is named under its field by the component, before anything is fired.
  await setField("shards", "9");
  const shardsError = page.getByTestId("error-shards");
  await shardsError.waitFor();
  check((await shardsError.getAttribute("data-field")) === "config.shards", "too many shards is refused under Shards");
  check(
    /^config\.shards = 9: rate 5 can't give each of 9 shards a whole token/.test((await shardsError.textContent()) ?? ""),
    `the Shards error is the component's message ("${await shardsError.textContent()}")`,
  );
  check(await fire.isDisabled(), "Fire is disabled while the config is invalid");
  check((await chart()) === capacity2, "the chart keeps the last valid config");
  await setField("shards", "1");
  await shardsError.waitFor({ state: "detached" });

  // A blank Rate, and one too large to be a number, are named as such, not as NaN.
  for (const [typed, said] of /** @type {const} */ ([
    ["", "Rate is required"],
    ["1e400", 'Rate: "1e400" is too large to be a number (the largest is about 1.8e308)'],
  ])) {
    await setField("rate", typed);
    const rateError = page.getByTestId("error-rate");
    await rateError.waitFor();
    check((await rateError.textContent()) === said, `a Rate of "${typed}" is named under Rate ("${said}")`);
  }
  await setField("rate", "5");
  await page.getByTestId("error-rate").waitFor({ state: "detached" });
  // A count of 0 or 0.5 is accepted, and the form says what it does.
  for (const [typed, said] of /** @type {const} */ ([
    ["0", /^0 is a peek: it takes nothing/],
    ["0.5", /^a fraction of a token: each request takes 0\.5/],
  ])) {
    await setField("count", typed);
    const note = page.getByTestId("count-note");
    await note.waitFor();
    check(said.test((await note.textContent()) ?? ""), `a count of ${typed} says what it does ("${await note.textContent()}")`);
  }
  await setField("count", "1");

  // The issue's case: a reserved count of 99 against capacity 5 and maxReserved 5 can never
  // succeed; the form says so under Count with the server's own message, and Fire stays disabled.
  await setField("capacity", "");
  await setField("maxReserved", "5");
  await page.locator('input[name="reserve"]').check();
  await setField("count", "99");
  const countError = page.getByTestId("error-count");
  await countError.waitFor();
  check(
    (await countError.textContent()) ===
      "count = 99: can never succeed: it exceeds the capacity (5) plus what may be reserved (5 in all)",
    `a reserved count that can never succeed is named under Count ("${await countError.textContent()}")`,
  );
  check(await fire.isDisabled(), "Fire is disabled for a request that can never succeed");
  const logged = await rows.count();
  await setField("count", "1");
  await setField("maxReserved", "");
  await page.locator('input[name="reserve"]').uncheck();
  await settled();
  check((await rows.count()) === logged, "nothing was fired while the request was invalid");

  // Switching to a fixed window redraws the chart as steps.
  await page.getByLabel("Kind").selectOption("fixed window");
  await settled();
  check((await projection.getAttribute("d"))?.includes("H") === true, "a fixed window is drawn as steps");
  // The clock stands at the last request's instant, 1 ms: waiting 1 s moves it to 1.001 s.
  const beforeWait = msOf(await simClock.textContent());
  check(beforeWait === 1, `the clock stands at the last request's 1 ms (${await simClock.textContent()})`);
  await page.getByRole("button", { name: "Wait", exact: true }).click();
  await clockReads(beforeWait + 1000);
  check(true, "waiting 1 s moves the simulated clock to 1.001 s");

  // A sliding window (5 in any 10 s): the form shows its capacity locked to the rate and no
  // reservations; a burst past 5 is refused; the chart is straight lines, and "Wait until full"
  // lands where the component says the limit is full.
  await page.getByLabel("Kind").selectOption("sliding window");
  await settled();
  const capacityInput = page.locator('input[name="capacity"]');
  check(
    (await capacityInput.isDisabled()) && (await capacityInput.inputValue()) === "5",
    "a sliding window shows its capacity locked to the rate (5)",
  );
  check(
    (await page.locator('input[name="maxReserved"]').count()) === 0 && (await page.locator('input[name="reserve"]').count()) === 0,
    "a sliding window has no max reserved or reserve fields",
  );
  await setField("count", "6");
  await countError.waitFor();
  check(
    (await countError.textContent()) === "count = 6: can never succeed: it exceeds the capacity (5)",
    `a count above a sliding window's rate is named under Count ("${await countError.textContent()}")`,
  );
  check(await fire.isDisabled(), "Fire is disabled for it");
  await setField("count", "1");
  // Exact (the box checked by default): the 5 taken at 0 come back together at 10 s, a step.
  const exactBox = page.getByLabel("Exact");
  check(await exactBox.isChecked(), "a sliding window is exact by default (the Exact box is checked)");
  const burstOfSix = async () => {
    await page.getByRole("button", { name: "Reset" }).click();
    await page.getByTestId("decision-summary").filter({ hasText: "No requests yet." }).waitFor();
    await settled();
    for (let i = 0; i < 6; i++) await fire.click();
    await rows.nth(5).waitFor();
    await settled();
  };
  await burstOfSix();
  check(
    (await outcomes()).join() === "admitted,admitted,admitted,admitted,admitted,refused",
    "an exact sliding window admits 5 of a burst of 6",
  );
  // Two to a ms: the five admitted at 0, 0, 1, 1 and 2 ms, the sixth refused at 2 ms.
  const exactAt = await instants();
  check(exactAt.join() === "0,0,1,1,2,2", `a burst of six is decided at 0, 0, 1, 1, 2 and 2 ms (${exactAt.join(", ")})`);
  check((await projection.getAttribute("d"))?.includes("H") === true, "an exact sliding window is drawn as steps");
  // The refused request may go when the first take (at 0) leaves the window, 10 s after it: 9.998 s
  // after its own 2 ms. The limit is full when the last (at 2 ms) leaves: at 10.002 s.
  const [firstTake = NaN, , , , lastTake = NaN, refusedAt = NaN] = exactAt;
  const exactRefused = (await rows.first().locator(".decision").textContent()) ?? "";
  check(
    exactRefused === `refused: retry in ${seconds(firstTake + 10_000 - refusedAt)}`,
    `the refused request waits until the first take leaves the window, 10 s after it ("${exactRefused}")`,
  );
  await page.getByRole("button", { name: "Wait until full" }).click();
  await page.locator('.clock[data-busy="false"]').waitFor();
  await readout.filter({ hasText: /^5 of 5 tokens/ }).waitFor();
  const exactFull = (await simClock.textContent()) ?? "";
  check(
    exactFull === seconds(lastTake + 10_000),
    `"Wait until full" moves the clock to when the last take leaves, 10 s after it (${exactFull})`,
  );
  // Approximate (the box unchecked): two counting windows, drawn with straight lines.
  await exactBox.uncheck();
  await settled();
  await burstOfSix();
  check(
    (await outcomes()).join() === "admitted,admitted,admitted,admitted,admitted,refused",
    "an approximate sliding window admits 5 of a burst of 6",
  );
  const approximateAt = await instants();
  check(approximateAt.join() === "0,0,1,1,2,2", `again at 0, 0, 1, 1, 2 and 2 ms (${approximateAt.join(", ")})`);
  const slidingPath = (await projection.getAttribute("d")) ?? "";
  check(slidingPath.includes("L") && !slidingPath.includes("H"), "an approximate sliding window is drawn with straight lines");
  check((await readout.textContent())?.startsWith("0 of 5 tokens") === true, "the readout says 0 of 5 tokens are left");
  await page.getByRole("button", { name: "Wait until full" }).click();
  await page.locator('.clock[data-busy="false"]').waitFor();
  await readout.filter({ hasText: /^5 of 5 tokens/ }).waitFor();
  // Nothing slid out before the boundary (the window before took nothing), so the refused request
  // waits for it plus a token's 2 s, and the limit is full a whole period after the boundary:
  // 8 s after the retry, wherever the lane's hashed phase put the boundary. The retry is counted
  // from the instant the refusal was decided at (its logged 2 ms).
  const refusedText = (await rows.first().locator(".decision").textContent()) ?? "";
  const retryIn = msOf(refusedText.match(/^refused: retry in (.+)$/)?.[1]);
  const retryAt = (approximateAt[5] ?? NaN) + retryIn;
  const fullAt = (await simClock.textContent()) ?? "";
  check(
    msOf(fullAt) - retryAt === 8000,
    `"Wait until full" moves the clock to when the approximate window is full (${fullAt}), 8 s after the refusal's retry (${refusedText}, at ${seconds(retryAt)})`,
  );
  check(await page.getByRole("button", { name: "Wait until full" }).isDisabled(), "and then the limit is full: nothing left to wait for");
  await exactBox.check();
  await page.getByLabel("Kind").selectOption("token bucket");

  // Sharded: 10 per 10 s over 5 shards (2 tokens each). The log shows the shards the component
  // reported, and they account for every token: no shard serves more than its 2.
  await page.getByRole("button", { name: "Reset" }).click();
  await page.getByTestId("decision-summary").filter({ hasText: "No requests yet." }).waitFor();
  await setField("rate", "10");
  await setField("shards", "5");
  const burst = page.getByRole("button", { name: "Fire 5 at once" });
  await burst.click();
  await burst.click();
  await fire.click();
  await fire.click();
  await rows.nth(11).waitFor();
  await settled();
  const shardCells = page.getByTestId("decision-shards");
  check((await shardCells.count()) === 12, "the log has a shards column for the sharded limit");
  /** @type {Array<{ outcome: string | null, shards: number[] }>} */
  const sharded = await rows.evaluateAll((trs) =>
    trs.map((tr) => ({
      outcome: tr.getAttribute("data-outcome"),
      shards: (tr.querySelector('[data-testid="decision-shards"]')?.getAttribute("data-shards") ?? "")
        .split(" ")
        .filter((x) => x !== "")
        .map(Number),
    })),
  );
  check(
    sharded.every((r) => r.shards.length > 0 && r.shards.every((n) => Number.isInteger(n) && n >= 0 && n < 5)),
    `every decision names shards 0 to 4 (${sharded.map((r) => r.shards.join("+")).join(", ")})`,
  );
  const admittedShards = sharded.filter((r) => r.outcome === "admitted").flatMap((r) => r.shards);
  const perShard = [0, 1, 2, 3, 4].map((n) => admittedShards.filter((x) => x === n).length);
  check(perShard.every((n) => n <= 2), `no shard is reported for more than its 2 tokens (${perShard.join(", ")})`);
  // Two to a ms: the twelve are decided at 0, 0, 1, 1, … 5, 5 ms, and the clock moves on to 6 ms.
  const shardedAt = await instants();
  check(
    shardedAt.join() === "0,0,1,1,2,2,3,3,4,4,5,5" && msOf(await simClock.textContent()) === 6,
    `the twelve are decided two to a ms, from 0 to 5 ms, and the clock stands at 6 ms (${shardedAt.join(", ")}; ${await simClock.textContent()})`,
  );
  // Each shard (2 tokens, refilling 2 per 10 s) holds 2, less the tokens it served, plus what it
  // refilled since its first take (it is never full again): summed over every shard at the clock.
  const clockMs = msOf(await simClock.textContent());
  const oldestFirst = [...sharded].reverse();
  const left = [0, 1, 2, 3, 4]
    .map((n) => {
      const takes = oldestFirst.flatMap((r, i) => (r.outcome === "admitted" && r.shards.includes(n) ? [shardedAt[i] ?? NaN] : []));
      return takes.length === 0 ? 2 : 2 - takes.length + ((clockMs - Math.min(...takes)) * 2) / 10_000;
    })
    .reduce((a, b) => a + b, 0);
  const admittedCount = sharded.filter((r) => r.outcome === "admitted").length;
  // The readout rounds to 0.01 token: when what is left lies exactly on a half (e.g. 25 shard-ms of
  // refill, 0.005), the sum in another order rounds it either way, so both roundings of that one
  // number are right; anywhere else they are the same text.
  const shownLeft = await readout.textContent();
  check(
    [tokens(left - 1e-9), tokens(left + 1e-9)].some((t) => shownLeft?.startsWith(`${t} of 10 tokens available at ${seconds(clockMs)}`) === true),
    `the readout (every shard read by getValue) says ${tokens(left)} of 10 are left at ${seconds(clockMs)}: ${10 - admittedCount} and what refilled since the takes ("${await readout.textContent()}")`,
  );

  // Reserve: debts show as reservations.
  await setField("shards", "1");
  await setField("rate", "5");
  await page.locator('input[name="reserve"]').check();
  await settled();
  await burst.click();
  await rows.nth(16).waitFor();
  await settled();
  check((await page.locator(".mark-reserved").count()) > 0, "reserving past the tokens left shows reservations");

  // Long waits: 5 per 10 days, reserved 5 ahead; the axis switches to days and keeps its labels
  // inside the chart, apart from each other and from the token labels at the origin.
  await page.getByRole("button", { name: "Reset" }).click();
  await page.getByTestId("decision-summary").filter({ hasText: "No requests yet." }).waitFor();
  await setField("periodSeconds", String(10 * 86_400));
  await burst.click();
  await rows.nth(4).waitFor();
  await burst.click();
  await rows.nth(9).waitFor();
  await settled();
  const svg = page.getByTestId("monitor-chart");
  check((await svg.getAttribute("data-time-unit")) === "d", "a 10-day refill is shown in days");
  await page.getByRole("button", { name: "Wait until full" }).click();
  await page.getByTestId("sim-clock").filter({ hasText: / d$/ }).waitFor();
  await settled();
  const layout = await svg.evaluate((el) => {
    const svgEl = /** @type {SVGSVGElement} */ (/** @type {unknown} */ (el));
    const box = (/** @type {SVGGraphicsElement} */ e) => {
      const b = e.getBBox();
      return { x0: b.x, x1: b.x + b.width, y0: b.y, y1: b.y + b.height, text: e.textContent ?? "" };
    };
    const times = [...svgEl.querySelectorAll(".chart-time-label")].map((e) => box(/** @type {SVGGraphicsElement} */ (e)));
    const tokens = [...svgEl.querySelectorAll(".chart-grid text:not(.chart-time-label):not(.chart-axis-title)")].map((e) =>
      box(/** @type {SVGGraphicsElement} */ (e)),
    );
    return { width: svgEl.viewBox.baseVal.width, times, tokens };
  });
  const overlaps = (/** @type {{x0:number,x1:number,y0:number,y1:number}} */ a, /** @type {typeof a} */ b) =>
    a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
  check(layout.times.length >= 3, `the time axis has labels (${layout.times.map((t) => t.text).join(", ")})`);
  check(layout.times.every((t) => t.text.endsWith(" d")), "the time labels are in days");
  check(layout.times.every((t) => t.x0 >= 0 && t.x1 <= layout.width), "every time label lies inside the chart");
  check(
    layout.times.every((t, i) => layout.times.every((u, j) => i === j || !overlaps(t, u))) &&
      layout.times.every((t) => layout.tokens.every((u) => !overlaps(t, u))),
    "no two labels collide, at the origin or elsewhere",
  );
  await page.locator('input[name="reserve"]').uncheck();
  await setField("periodSeconds", "10");

  // The chat: three messages may go at once, then Send counts down, legibly.
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
  for (const scheme of /** @type {const} */ (["light", "dark"])) {
    await page.emulateMedia({ colorScheme: scheme });
    const ratio = await send.evaluate(contrastOf);
    check(ratio >= 4.5, `the countdown's text has contrast ${ratio.toFixed(2)}:1 (WCAG AA ≥ 4.5) in the ${scheme} scheme`);
  }
  await page.emulateMedia({ colorScheme: "light" });

  // A scenario for the screenshot: reset, then bursts and waits on the default limit (5 per 10 s).
  await page.getByRole("button", { name: "Reset" }).click();
  await page.getByTestId("decision-summary").filter({ hasText: "No requests yet." }).waitFor();
  await settled();
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
  await settled();
  check(
    (await outcomes()).join() ===
      "admitted,admitted,admitted,admitted,admitted,refused,admitted,admitted,admitted,refused,refused,refused,admitted,admitted,admitted",
    "the scripted traffic gets the decisions the token bucket promises",
  );
  // Each burst is decided two to a ms from the clock it starts at (a lone request keeps its ms),
  // and each wait counts from where the last decision left the clock.
  const scripted = [
    [0, 0, 1, 1, 2], // the clock stands at 2 ms
    [1002], // 1 s later
    [3002], // 2 s later
    [6002, 6002, 6003, 6003, 6004], // 3 s later: the three refused at 6.003, 6.003 and 6.004 s
    [10_004], // 4 s later
    [13_004, 13_004], // 3 s later: two in a ms, so the deployment's clock moves on to 13.005 s
  ].flat();
  const scriptAt = await instants();
  check(scriptAt.join() === scripted.join(), `the scripted requests are decided at ${scriptAt.map(seconds).join(", ")}`);
  await clockReads(13_005);
  check(true, "after the script the clock stands at 13.005 s, the ms after the last two requests");
  // The three refusals are less than a pixel apart on a chart of 13 s, so they are one mark.
  const counted = page.locator('.mark[data-count="3"]');
  const countedTitle = (await counted.locator("title").allTextContents()).join("|");
  check(
    (await counted.count()) === 1 &&
      (await counted.getAttribute("data-outcome")) === "refused" &&
      (await counted.locator("text").textContent()) === "×3" &&
      ["#10 at 6.003 s", "#11 at 6.003 s", "#12 at 6.004 s"].every((at, i) => countedTitle.split("\n")[i]?.startsWith(`${at},`)),
    `three refusals at 6.003, 6.003 and 6.004 s are drawn as one mark labelled "×3" (${countedTitle.replaceAll("\n", "; ")})`,
  );

  await mkdir(artifacts, { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  log(`screenshot: ${path.relative(root, screenshot)}`);

  // --- The Monitor and the admin chart at phone width ------------------------------------------
  // The charts draw at their box's width, so their labels keep their size: at 390 px every label
  // is 11 px or more, inside its chart, and apart from every other.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction(() =>
    [...document.querySelectorAll("figure.chart svg")].every((el) => {
      const svg = /** @type {SVGSVGElement} */ (/** @type {unknown} */ (el));
      return Math.abs(svg.getBoundingClientRect().width - svg.viewBox.baseVal.width) < 1;
    }),
  );
  const phoneLabels = await page.evaluate(labelsOf, "figure.chart svg");
  check(phoneLabels.length === 2, `the Monitor and the admin chart are on the page (${phoneLabels.length})`);
  for (const c of phoneLabels) {
    check(c.smallest >= 11, `at 390 px the ${c.name}'s smallest label is ${c.smallest.toFixed(1)} px (≥ 11)`);
    check(c.outside.length === 0, `at 390 px every ${c.name} label lies inside it${c.outside.map((t) => ` "${t}"`).join("")}`);
    check(c.overlapping.length === 0, `at 390 px no two ${c.name} labels overlap${c.overlapping.map((t) => ` (${t})`).join("")}`);
  }
  await page.screenshot({ path: path.join(artifacts, "playground-390.png"), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 1000 });

  // --- The demo's HTML report at phone width -------------------------------------------------
  // Rendered by report.ts itself (through vite's module runner, as the demo runs it) from fixed
  // results with the widest labels the demo produces, so this checks the layout, not a run.
  log("rendering a demo report (example/demo/report.ts) from fixed results");
  const html = await renderDemoReport();
  const phone = await context.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.setContent(html, { waitUntil: "load" });
  // Each chart is drawn in two layouts; the page shows the one its width calls for.
  const fit = await phone.evaluate(labelsOf, "svg.chart");
  check(fit.length === 7, `the report shows its charts, three of them side by side in one section (${fit.length})`);
  const scrollWidth = await phone.evaluate(() => document.documentElement.scrollWidth);
  check(scrollWidth <= 390, `at 390 px the report doesn't scroll sideways (${scrollWidth} px wide)`);
  check(
    fit.every((c) => c.outside.length === 0),
    `at 390 px every chart label lies inside its chart${fit.flatMap((c) => c.outside).map((t) => ` "${t}"`).join("")}`,
  );
  check(
    fit.every((c) => c.overlapping.length === 0),
    `at 390 px no two chart labels overlap${fit.flatMap((c) => c.overlapping).map((t) => ` (${t})`).join("")}`,
  );
  const smallest = Math.min(...fit.map((c) => c.smallest));
  check(smallest >= 11, `at 390 px the smallest chart text is ${smallest.toFixed(1)} px (≥ 11)`);
  check(
    fit.every((c) => c.notesOnPlot.length === 0),
    `at 390 px no note ("capacity", "most that may be reserved") lies over the plot, where the curve is${fit
      .flatMap((c) => c.notesOnPlot)
      .map((t) => ` "${t}"`)
      .join("")}`,
  );
  await mkdir(artifacts, { recursive: true });
  await phone.screenshot({ path: path.join(artifacts, "demo-report-390.png"), fullPage: true });
  log(`screenshot: ${path.relative(root, path.join(artifacts, "demo-report-390.png"))}`);
  await phone.close();

  // --- Live mode, without a backend -----------------------------------------------------------
  // A closed local port stands in for the deployment: the live tree must render, and wait.
  log("building the UI (live mode, pointed at a closed local port)");
  const closed = await freePort();
  await buildUi(liveDir, `http://${HOST}:${closed}`);
  const liveUrl = await serve(liveDir);
  const livePage = await context.newPage();
  livePage.on("pageerror", (error) => errors.push(`live page error: ${error.message}`));
  // The one error expected here: the Convex client's websocket to the closed port is refused.
  const refused = `WebSocket connection to 'ws://${HOST}:${closed}/`;
  livePage.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith(refused)) errors.push(`live console error: ${message.text()}`);
  });
  await livePage.goto(liveUrl, { waitUntil: "load" });
  await livePage.getByRole("heading", { name: "Playground" }).waitFor();
  check((await livePage.getByTestId("offline-banner").count()) === 0, "live mode shows no offline banner");
  // The deployment doesn't answer: the header says so, once the client's first attempt has failed.
  const connection = livePage.getByTestId("connection");
  await livePage.locator('[data-testid="connection"][data-state="unreachable"]').waitFor();
  check(
    /^Live: can't reach your deployment at /.test((await connection.textContent()) ?? ""),
    `the header says the deployment can't be reached ("${await connection.textContent()}")`,
  );
  check(
    (await livePage.locator(".chat-form button[type=submit]").textContent()) === "Loading…",
    "live Send waits for the limit to load",
  );
  const signUp = livePage.locator(".signup button");
  check(
    (await signUp.textContent()) === "Sign up" && (await signUp.isDisabled()),
    "live Sign up waits, disabled, for the sign-up window to load",
  );
  // Live, the form is checked by the component run in the page before anything is sent.
  await livePage.locator('input[name="shards"]').fill("9");
  const liveError = livePage.getByTestId("error-shards");
  await liveError.waitFor();
  check((await liveError.getAttribute("data-field")) === "config.shards", "live, too many shards is refused under Shards before sending");
  check(
    (await livePage.getByRole("heading", { name: "Monitor: admin view" }).count()) === 1,
    "live mode renders the admin view, waiting on the admin queries",
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
