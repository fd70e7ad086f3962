// A checker for the live Playground's form: the rate limiter component, run in the page on
// convex-test (see offline/deployment.ts), checks each request before it is sent, so the form
// names the field a deployment would. Loaded on first use: live mode only pays for it then.
import type { Lane } from "../offline/lane.js";
import type { Checker } from "./useValidation.js";

let lane: Promise<Lane> | undefined;

/** checkInPage checks `request` with the component in the page, at the browser's clock. */
export const checkInPage: Checker = async (request) => {
  lane ??= import("../offline/deployment.js").then((m) => m.openLane());
  return (await lane).check(Date.now(), request);
};
