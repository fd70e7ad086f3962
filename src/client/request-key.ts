// Who is calling: keys made from the request's address and user agent (`RateLimiter.requestKey`),
// optionally hashed with the app's secret, and the address a limit with network entries is matched
// by. Addresses are parsed and normalized by the pure src/shared/overrides/address.ts.
import { addressKey, parseAddress, validateIpv6Prefix } from "../shared/overrides/address.js";
import { invalid, MAX_NAME_LENGTH } from "../shared/validation/validate.js";

/** What `requestKey` reads a key from: the address, the user agent, or both. */
export type RequestKeyBy = "ip" | "userAgent" | "ip+userAgent";

/** The most characters of a user agent a key keeps: enough to tell clients apart, and keys stay small. */
export const MAX_USER_AGENT_LENGTH = 512;

/** Options of {@link RateLimiter.requestKey}. */
export type RequestKeyOptions = {
  /**
   * What the key names: `"ip"`, the address (IPv4 as is, IPv6 grouped by `ipv6Prefix`);
   * `"userAgent"`, the user agent (its first 512 characters); `"ip+userAgent"`, both, as
   * `"<address key> <user agent>"`.
   */
  by: RequestKeyBy;
  /**
   * The key to return when the request has no address (scheduled functions, crons, server-to-server
   * calls) or no user agent, for what it needs. Default: none, and such a request is an
   * `InvalidRateLimit` error naming `request.ip` or `request.userAgent`. Never hashed.
   */
  fallback?: string;
  /**
   * The IPv6 prefix addresses are grouped by, in bits (1-128): every address in one network of
   * that size is one key, so one user's rotating addresses (a /64 is one subnet) count together.
   * Default 64. IPv4 addresses are keyed as they are.
   */
  ipv6Prefix?: number;
  /**
   * Store a keyed hash instead of the address and user agent: the key is HMAC-SHA-256 of what it
   * would name, with `secret` (e.g. an environment variable of the app; at least 16 characters),
   * its first 128 bits in base64url (22 characters). Rows, overrides and metric events then hold
   * no address or user agent. Default: none, the key names them in clear. Changing the secret
   * starts every key afresh.
   */
  hash?: { secret: string };
};

/** The part of a mutation's or action's `ctx` that tells who is calling. */
export type RequestMetadataCtx = { meta: { getRequestMetadata(): Promise<{ ip: string | null; userAgent: string | null }> } };

/**
 * requestIp returns the address the request came from (`ctx.meta.getRequestMetadata().ip`), or
 * undefined when it has none (scheduled functions, crons) or `ctx` can't tell (a query's).
 */
export async function requestIp(ctx: object): Promise<string | undefined> {
  const meta = (ctx as { meta?: { getRequestMetadata?: unknown } }).meta;
  if (typeof meta?.getRequestMetadata !== "function") return undefined;
  const { ip } = await (ctx as RequestMetadataCtx).meta.getRequestMetadata();
  return ip ?? undefined;
}

/**
 * withIp sets `args.ip` to the request's own address when the limit matches network entries
 * (`networks: true`) and the caller gave none, so the component can find the entry holding it.
 */
export async function withIp<A extends { ip?: string; config: { networks?: boolean } }>(ctx: object, args: A): Promise<A> {
  if (args.config.networks !== true || args.ip !== undefined) return args;
  const ip = await requestIp(ctx);
  return ip === undefined ? args : { ...args, ip };
}

/** The key of a request's metadata, unhashed; checks every option first (see {@link RequestKeyOptions}). */
export function plainRequestKey(metadata: { ip: string | null; userAgent: string | null }, options: RequestKeyOptions): { key: string; fallback: boolean } {
  const { by, fallback, ipv6Prefix, hash } = (options ?? {}) as Partial<RequestKeyOptions>;
  if (by !== "ip" && by !== "userAgent" && by !== "ip+userAgent") throw invalid("by", by, 'must be "ip", "userAgent" or "ip+userAgent"');
  if (fallback !== undefined) {
    if (typeof fallback !== "string" || fallback === "") throw invalid("fallback", fallback, "must be a non-empty string, the key of requests without what `by` reads");
    if (fallback.length > MAX_NAME_LENGTH) throw invalid("fallback", fallback, `is ${fallback.length} characters; a key has at most ${MAX_NAME_LENGTH}`);
  }
  if (ipv6Prefix !== undefined) validateIpv6Prefix(ipv6Prefix, "ipv6Prefix");
  if (hash !== undefined && !(typeof hash === "object" && hash !== null && typeof hash.secret === "string" && hash.secret.length >= 16)) {
    // Never the secret itself in an error: only what is wrong with it.
    const secret: unknown = typeof hash === "object" && hash !== null ? hash.secret : hash;
    const shown = typeof secret === "string" ? `(${secret.length} characters)` : secret;
    throw invalid("hash.secret", shown, "must be a secret of at least 16 characters (e.g. an environment variable); without one, leave hash out");
  }
  const parts: string[] = [];
  if (by !== "userAgent") {
    const { ip } = metadata;
    if (ip === null || ip === "") {
      if (fallback !== undefined) return { key: fallback, fallback: true };
      throw invalid("request.ip", ip, "the request has no address (scheduled functions, crons and server-to-server calls have none); pass `fallback`, the key for such requests");
    }
    parts.push(addressKey(parseAddress(ip, "request.ip"), ipv6Prefix));
  }
  if (by !== "ip") {
    const { userAgent } = metadata;
    if (userAgent === null || userAgent === "") {
      if (fallback !== undefined) return { key: fallback, fallback: true };
      throw invalid("request.userAgent", userAgent, "the request has no user agent; pass `fallback`, the key for such requests, or key by ip");
    }
    parts.push(truncated(userAgent));
  }
  return { key: parts.join(" "), fallback: false };
}

/** A user agent's first {@link MAX_USER_AGENT_LENGTH} characters, never cutting a surrogate pair in two (a lone surrogate is no valid string for Convex). */
function truncated(userAgent: string): string {
  if (userAgent.length <= MAX_USER_AGENT_LENGTH) return userAgent;
  const last = userAgent.charCodeAt(MAX_USER_AGENT_LENGTH - 1);
  return userAgent.slice(0, last >= 0xd800 && last <= 0xdbff ? MAX_USER_AGENT_LENGTH - 1 : MAX_USER_AGENT_LENGTH);
}

/** The first 128 bits of HMAC-SHA-256(`secret`, `text`), in base64url without padding. */
export async function keyedHash(secret: string, text: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(text))).slice(0, 16);
  let binary = "";
  for (const byte of mac) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** requestKey makes a key from who is calling: see {@link RateLimiter.requestKey}. */
export async function requestKey(ctx: RequestMetadataCtx, options: RequestKeyOptions): Promise<string> {
  const metadata = await ctx.meta.getRequestMetadata();
  const { key, fallback } = plainRequestKey(metadata, options);
  return options.hash === undefined || fallback ? key : await keyedHash(options.hash.secret, key);
}
