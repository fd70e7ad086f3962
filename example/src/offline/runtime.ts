// What the offline UI's in-browser deployment needs from the page before any Convex function module
// loads. Imported first by deployment.ts, so it runs before them; live mode never imports it.

/**
 * Convex warns (console.error) when a module defining functions loads in a real browser, to catch
 * server code bundled into a client by mistake. Here it is on purpose: the offline UI runs the app's
 * functions on convex-test in the page. This is convex's own switch for that.
 */
Object.assign(globalThis, { __convexAllowFunctionsInBrowser: true });

/** convex-test installs its syscall proxy on Node's `global`; in a page that is `globalThis`. */
if (!("global" in globalThis)) Object.assign(globalThis, { global: globalThis });

export {};
