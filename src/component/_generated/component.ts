/* eslint-disable */
/**
 * Generated `ComponentApi` utility.
 *
 * THIS CODE IS AUTOMATICALLY GENERATED.
 *
 * To regenerate, run `npx convex dev`.
 * @module
 */

import type { FunctionReference } from "convex/server";

/**
 * A utility for referencing a Convex component's exposed API.
 *
 * Useful when expecting a parameter like `components.myComponent`.
 * Usage:
 * ```ts
 * async function myFunction(ctx: QueryCtx, component: ComponentApi) {
 *   return ctx.runQuery(component.someFile.someQuery, { ...args });
 * }
 * ```
 */
export type ComponentApi<Name extends string | undefined = string | undefined> =
  {
    admin: {
      cleanup: FunctionReference<
        "mutation",
        "internal",
        {
          batchSize?: number;
          cursor?: { after?: { key?: string }; limit: number };
          limits: Array<{
            config:
              | {
                  applyUpdates?: "transactionally" | "asynchronously";
                  capacity?: number;
                  dryRun?: boolean;
                  kind: "token bucket";
                  lockout?: number;
                  maxReserved?: number;
                  metrics?: boolean;
                  networks?: boolean;
                  period: number;
                  rate: number;
                  shards?: number;
                  start?: null;
                }
              | {
                  applyUpdates?: "transactionally" | "asynchronously";
                  calendar?: {
                    anchor: number;
                    period: "day" | "week" | "month";
                    timeZone: string;
                  };
                  capacity?: number;
                  dryRun?: boolean;
                  kind: "fixed window";
                  lockout?: number;
                  maxReserved?: number;
                  metrics?: boolean;
                  networks?: boolean;
                  period: number;
                  rate: number;
                  shards?: number;
                  start?: number;
                }
              | {
                  applyUpdates?: "transactionally" | "asynchronously";
                  capacity?: number;
                  dryRun?: boolean;
                  exact?: boolean;
                  kind: "sliding window";
                  lockout?: number;
                  maxReserved?: number;
                  metrics?: boolean;
                  networks?: boolean;
                  period: number;
                  rate: number;
                  shards?: number;
                  start?: number;
                };
            name: string;
          }>;
        },
        {
          done: boolean;
          keysDeleted: number;
          keysRead: number;
          rowsDeleted: number;
          rowsRead: number;
        },
        Name
      >;
      listKeys: FunctionReference<
        "query",
        "internal",
        {
          config:
            | {
                applyUpdates?: "transactionally" | "asynchronously";
                capacity?: number;
                dryRun?: boolean;
                kind: "token bucket";
                lockout?: number;
                maxReserved?: number;
                metrics?: boolean;
                networks?: boolean;
                period: number;
                rate: number;
                shards?: number;
                start?: null;
              }
            | {
                applyUpdates?: "transactionally" | "asynchronously";
                calendar?: {
                  anchor: number;
                  period: "day" | "week" | "month";
                  timeZone: string;
                };
                capacity?: number;
                dryRun?: boolean;
                kind: "fixed window";
                lockout?: number;
                maxReserved?: number;
                metrics?: boolean;
                networks?: boolean;
                period: number;
                rate: number;
                shards?: number;
                start?: number;
              }
            | {
                applyUpdates?: "transactionally" | "asynchronously";
                capacity?: number;
                dryRun?: boolean;
                exact?: boolean;
                kind: "sliding window";
                lockout?: number;
                maxReserved?: number;
                metrics?: boolean;
                networks?: boolean;
                period: number;
                rate: number;
                shards?: number;
                start?: number;
              };
          name: string;
          paginationOpts: {
            cursor: string | null;
            endCursor?: string | null;
            id?: number;
            maximumBytesRead?: number;
            maximumRowsRead?: number;
            numItems: number;
          };
        },
        {
          continueCursor: string;
          isDone: boolean;
          page: Array<{
            capacity: number;
            fullIn: number;
            idle: boolean;
            key?: string;
            pending: number;
            rows: number;
            value: number;
          }>;
          pageStatus?: "SplitRecommended" | "SplitRequired" | null;
          splitCursor?: string | null;
        },
        Name
      >;
      listNames: FunctionReference<
        "query",
        "internal",
        {
          paginationOpts: {
            cursor: string | null;
            endCursor?: string | null;
            id?: number;
            maximumBytesRead?: number;
            maximumRowsRead?: number;
            numItems: number;
          };
        },
        {
          continueCursor: string;
          isDone: boolean;
          page: Array<{ name: string }>;
          pageStatus?: "SplitRecommended" | "SplitRequired" | null;
          splitCursor?: string | null;
        },
        Name
      >;
    };
    leases: {
      acquire: FunctionReference<
        "mutation",
        "internal",
        {
          config: {
            capacity: number;
            kind: "concurrency";
            lease: number;
            metrics?: boolean;
          };
          key?: string;
          name: string;
          raiseInCaller?: boolean;
          throws?: boolean;
        },
        | { expiresAt: number; lease: string; ok: true }
        | {
            error?: { kind: "RateLimited"; name: string; retryAfter: number };
            ok: false;
            retryAfter: number;
          },
        Name
      >;
      check: FunctionReference<
        "query",
        "internal",
        {
          config: {
            capacity: number;
            kind: "concurrency";
            lease: number;
            metrics?: boolean;
          };
          key?: string;
          name: string;
          raiseInCaller?: boolean;
          throws?: boolean;
        },
        { ok: true; retryAfter?: number } | { ok: false; retryAfter: number },
        Name
      >;
      deleteExpired: FunctionReference<
        "mutation",
        "internal",
        { batchSize?: number },
        { deleted: number; done: boolean },
        Name
      >;
      extend: FunctionReference<
        "mutation",
        "internal",
        { by?: number; lease: string },
        { expiresAt: number; ok: true } | { ok: false },
        Name
      >;
      getValue: FunctionReference<
        "query",
        "internal",
        {
          config: {
            capacity: number;
            kind: "concurrency";
            lease: number;
            metrics?: boolean;
          };
          expiries?: boolean;
          key?: string;
          name: string;
        },
        {
          capacity: number;
          earliestExpiry?: number;
          expiries?: Array<number>;
          inFlight: number;
          ts: number;
        },
        Name
      >;
      release: FunctionReference<
        "mutation",
        "internal",
        { lease: string },
        { released: boolean },
        Name
      >;
      reset: FunctionReference<
        "mutation",
        "internal",
        { key?: string; name: string },
        null,
        Name
      >;
    };
    lib: {
      checkAll: FunctionReference<
        "query",
        "internal",
        {
          details?: boolean;
          ip?: string;
          raiseInCaller?: boolean;
          requests: Array<{
            config: {
              applyUpdates?: string;
              calendar?: {
                anchor: number;
                period: "day" | "week" | "month";
                timeZone: string;
              };
              capacity?: number;
              dryRun?: boolean;
              exact?: boolean;
              kind: string;
              lockout?: number;
              maxReserved?: number;
              metrics?: boolean;
              networks?: boolean;
              period: number;
              rate: number;
              shards?: number;
              start?: number | null;
            };
            count?: number;
            key?: string;
            name: string;
            tier?: string;
          }>;
          reserve?: boolean;
          throws?: boolean;
        },
        | {
            ok: true;
            results: Array<
              | {
                  details?: {
                    capacity: number;
                    config?:
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "token bucket";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: null;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          calendar?: {
                            anchor: number;
                            period: "day" | "week" | "month";
                            timeZone: string;
                          };
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "fixed window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          exact?: boolean;
                          kind: "sliding window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        };
                    exact: boolean;
                    remaining: number;
                    resetAfter: number;
                    shards: Array<number>;
                  };
                  ok: true;
                  resetsAt?: number;
                  retryAfter?: number;
                }
              | {
                  details?: {
                    capacity: number;
                    config?:
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "token bucket";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: null;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          calendar?: {
                            anchor: number;
                            period: "day" | "week" | "month";
                            timeZone: string;
                          };
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "fixed window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          exact?: boolean;
                          kind: "sliding window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        };
                    exact: boolean;
                    remaining: number;
                    resetAfter: number;
                    shards: Array<number>;
                  };
                  ok: false;
                  resetsAt?: number;
                  retryAfter: number;
                }
            >;
            retryAfter?: number;
          }
        | {
            ok: false;
            results: Array<
              | {
                  details?: {
                    capacity: number;
                    config?:
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "token bucket";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: null;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          calendar?: {
                            anchor: number;
                            period: "day" | "week" | "month";
                            timeZone: string;
                          };
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "fixed window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          exact?: boolean;
                          kind: "sliding window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        };
                    exact: boolean;
                    remaining: number;
                    resetAfter: number;
                    shards: Array<number>;
                  };
                  ok: true;
                  resetsAt?: number;
                  retryAfter?: number;
                }
              | {
                  details?: {
                    capacity: number;
                    config?:
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "token bucket";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: null;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          calendar?: {
                            anchor: number;
                            period: "day" | "week" | "month";
                            timeZone: string;
                          };
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "fixed window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          exact?: boolean;
                          kind: "sliding window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        };
                    exact: boolean;
                    remaining: number;
                    resetAfter: number;
                    shards: Array<number>;
                  };
                  ok: false;
                  resetsAt?: number;
                  retryAfter: number;
                }
            >;
            retryAfter: number;
          },
        Name
      >;
      checkRateLimit: FunctionReference<
        "query",
        "internal",
        {
          config: {
            applyUpdates?: string;
            calendar?: {
              anchor: number;
              period: "day" | "week" | "month";
              timeZone: string;
            };
            capacity?: number;
            dryRun?: boolean;
            exact?: boolean;
            kind: string;
            lockout?: number;
            maxReserved?: number;
            metrics?: boolean;
            networks?: boolean;
            period: number;
            rate: number;
            shards?: number;
            start?: number | null;
          };
          count?: number;
          details?: boolean;
          exact?: boolean;
          ip?: string;
          key?: string;
          name: string;
          raiseInCaller?: boolean;
          reserve?: boolean;
          throws?: boolean;
          tier?: string;
        },
        | {
            details?: {
              capacity: number;
              config?:
                | {
                    applyUpdates?: "transactionally" | "asynchronously";
                    capacity?: number;
                    dryRun?: boolean;
                    kind: "token bucket";
                    lockout?: number;
                    maxReserved?: number;
                    metrics?: boolean;
                    networks?: boolean;
                    period: number;
                    rate: number;
                    shards?: number;
                    start?: null;
                  }
                | {
                    applyUpdates?: "transactionally" | "asynchronously";
                    calendar?: {
                      anchor: number;
                      period: "day" | "week" | "month";
                      timeZone: string;
                    };
                    capacity?: number;
                    dryRun?: boolean;
                    kind: "fixed window";
                    lockout?: number;
                    maxReserved?: number;
                    metrics?: boolean;
                    networks?: boolean;
                    period: number;
                    rate: number;
                    shards?: number;
                    start?: number;
                  }
                | {
                    applyUpdates?: "transactionally" | "asynchronously";
                    capacity?: number;
                    dryRun?: boolean;
                    exact?: boolean;
                    kind: "sliding window";
                    lockout?: number;
                    maxReserved?: number;
                    metrics?: boolean;
                    networks?: boolean;
                    period: number;
                    rate: number;
                    shards?: number;
                    start?: number;
                  };
              exact: boolean;
              remaining: number;
              resetAfter: number;
              shards: Array<number>;
            };
            ok: true;
            resetsAt?: number;
            retryAfter?: number;
          }
        | {
            details?: {
              capacity: number;
              config?:
                | {
                    applyUpdates?: "transactionally" | "asynchronously";
                    capacity?: number;
                    dryRun?: boolean;
                    kind: "token bucket";
                    lockout?: number;
                    maxReserved?: number;
                    metrics?: boolean;
                    networks?: boolean;
                    period: number;
                    rate: number;
                    shards?: number;
                    start?: null;
                  }
                | {
                    applyUpdates?: "transactionally" | "asynchronously";
                    calendar?: {
                      anchor: number;
                      period: "day" | "week" | "month";
                      timeZone: string;
                    };
                    capacity?: number;
                    dryRun?: boolean;
                    kind: "fixed window";
                    lockout?: number;
                    maxReserved?: number;
                    metrics?: boolean;
                    networks?: boolean;
                    period: number;
                    rate: number;
                    shards?: number;
                    start?: number;
                  }
                | {
                    applyUpdates?: "transactionally" | "asynchronously";
                    capacity?: number;
                    dryRun?: boolean;
                    exact?: boolean;
                    kind: "sliding window";
                    lockout?: number;
                    maxReserved?: number;
                    metrics?: boolean;
                    networks?: boolean;
                    period: number;
                    rate: number;
                    shards?: number;
                    start?: number;
                  };
              exact: boolean;
              remaining: number;
              resetAfter: number;
              shards: Array<number>;
            };
            ok: false;
            resetsAt?: number;
            retryAfter: number;
          },
        Name
      >;
      clearAll: FunctionReference<
        "mutation",
        "internal",
        { before?: number },
        null,
        Name
      >;
      credit: FunctionReference<
        "mutation",
        "internal",
        {
          config: {
            applyUpdates?: string;
            calendar?: {
              anchor: number;
              period: "day" | "week" | "month";
              timeZone: string;
            };
            capacity?: number;
            dryRun?: boolean;
            exact?: boolean;
            kind: string;
            lockout?: number;
            maxReserved?: number;
            metrics?: boolean;
            networks?: boolean;
            period: number;
            rate: number;
            shards?: number;
            start?: number | null;
          };
          count: number;
          ip?: string;
          key?: string;
          name: string;
          shards?: Array<number>;
          tier?: string;
        },
        { credited: number },
        Name
      >;
      getServerTime: FunctionReference<
        "mutation",
        "internal",
        {},
        number,
        Name
      >;
      getValue: FunctionReference<
        "query",
        "internal",
        {
          config: {
            applyUpdates?: string;
            calendar?: {
              anchor: number;
              period: "day" | "week" | "month";
              timeZone: string;
            };
            capacity?: number;
            dryRun?: boolean;
            exact?: boolean;
            kind: string;
            lockout?: number;
            maxReserved?: number;
            metrics?: boolean;
            networks?: boolean;
            period: number;
            rate: number;
            shards?: number;
            start?: number | null;
          };
          details?: boolean;
          ip?: string;
          key?: string;
          mutationMs?: number;
          name: string;
          sampleShards?: number;
          tier?: string;
          wait?: boolean;
        },
        {
          allowed?: true;
          blockedBy?: "key" | "network" | "tier" | "lockout";
          blockedUntil?: number;
          by?: "config" | "key" | "network" | "tier";
          config:
            | {
                applyUpdates?: "transactionally" | "asynchronously";
                capacity?: number;
                dryRun?: boolean;
                kind: "token bucket";
                lockout?: number;
                maxReserved?: number;
                metrics?: boolean;
                networks?: boolean;
                period: number;
                rate: number;
                shards?: number;
                start?: null;
              }
            | {
                applyUpdates?: "transactionally" | "asynchronously";
                calendar?: {
                  anchor: number;
                  period: "day" | "week" | "month";
                  timeZone: string;
                };
                capacity?: number;
                dryRun?: boolean;
                kind: "fixed window";
                lockout?: number;
                maxReserved?: number;
                metrics?: boolean;
                networks?: boolean;
                period: number;
                rate: number;
                shards?: number;
                start?: number;
              }
            | {
                applyUpdates?: "transactionally" | "asynchronously";
                capacity?: number;
                dryRun?: boolean;
                exact?: boolean;
                kind: "sliding window";
                lockout?: number;
                maxReserved?: number;
                metrics?: boolean;
                networks?: boolean;
                period: number;
                rate: number;
                shards?: number;
                start?: number;
              };
          heat?: {
            hot: boolean;
            maxWritesPerShard: number;
            mutationMs: number;
            recommend?: {
              applyUpdates: "transactionally" | "asynchronously";
              shards: number;
            };
            samples: number;
            writesPerShard: number;
          };
          log?: ArrayBuffer;
          network?: string;
          prev?: number;
          resetsAt?: number;
          runAt?: number;
          shard: number;
          total?: { capacity: number; exact: boolean; value: number };
          ts: number;
          value: number;
        },
        Name
      >;
      limitAll: FunctionReference<
        "mutation",
        "internal",
        {
          details?: boolean;
          ip?: string;
          raiseInCaller?: boolean;
          requests: Array<{
            config: {
              applyUpdates?: string;
              calendar?: {
                anchor: number;
                period: "day" | "week" | "month";
                timeZone: string;
              };
              capacity?: number;
              dryRun?: boolean;
              exact?: boolean;
              kind: string;
              lockout?: number;
              maxReserved?: number;
              metrics?: boolean;
              networks?: boolean;
              period: number;
              rate: number;
              shards?: number;
              start?: number | null;
            };
            count?: number;
            key?: string;
            name: string;
            tier?: string;
          }>;
          reserve?: boolean;
          throws?: boolean;
        },
        | {
            error?: {
              kind: "RateLimited";
              name: string;
              names: Array<string>;
              retryAfter: number;
            };
            ok: true;
            results: Array<
              | {
                  details?: {
                    capacity: number;
                    config?:
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "token bucket";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: null;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          calendar?: {
                            anchor: number;
                            period: "day" | "week" | "month";
                            timeZone: string;
                          };
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "fixed window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          exact?: boolean;
                          kind: "sliding window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        };
                    exact: boolean;
                    remaining: number;
                    resetAfter: number;
                    shards: Array<number>;
                  };
                  ok: true;
                  resetsAt?: number;
                  retryAfter?: number;
                }
              | {
                  details?: {
                    capacity: number;
                    config?:
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "token bucket";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: null;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          calendar?: {
                            anchor: number;
                            period: "day" | "week" | "month";
                            timeZone: string;
                          };
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "fixed window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          exact?: boolean;
                          kind: "sliding window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        };
                    exact: boolean;
                    remaining: number;
                    resetAfter: number;
                    shards: Array<number>;
                  };
                  ok: false;
                  resetsAt?: number;
                  retryAfter: number;
                }
            >;
            retryAfter?: number;
          }
        | {
            error?: {
              kind: "RateLimited";
              name: string;
              names: Array<string>;
              retryAfter: number;
            };
            ok: false;
            results: Array<
              | {
                  details?: {
                    capacity: number;
                    config?:
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "token bucket";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: null;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          calendar?: {
                            anchor: number;
                            period: "day" | "week" | "month";
                            timeZone: string;
                          };
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "fixed window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          exact?: boolean;
                          kind: "sliding window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        };
                    exact: boolean;
                    remaining: number;
                    resetAfter: number;
                    shards: Array<number>;
                  };
                  ok: true;
                  resetsAt?: number;
                  retryAfter?: number;
                }
              | {
                  details?: {
                    capacity: number;
                    config?:
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "token bucket";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: null;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          calendar?: {
                            anchor: number;
                            period: "day" | "week" | "month";
                            timeZone: string;
                          };
                          capacity?: number;
                          dryRun?: boolean;
                          kind: "fixed window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        }
                      | {
                          applyUpdates?: "transactionally" | "asynchronously";
                          capacity?: number;
                          dryRun?: boolean;
                          exact?: boolean;
                          kind: "sliding window";
                          lockout?: number;
                          maxReserved?: number;
                          metrics?: boolean;
                          networks?: boolean;
                          period: number;
                          rate: number;
                          shards?: number;
                          start?: number;
                        };
                    exact: boolean;
                    remaining: number;
                    resetAfter: number;
                    shards: Array<number>;
                  };
                  ok: false;
                  resetsAt?: number;
                  retryAfter: number;
                }
            >;
            retryAfter: number;
          },
        Name
      >;
      rateLimit: FunctionReference<
        "mutation",
        "internal",
        {
          config: {
            applyUpdates?: string;
            calendar?: {
              anchor: number;
              period: "day" | "week" | "month";
              timeZone: string;
            };
            capacity?: number;
            dryRun?: boolean;
            exact?: boolean;
            kind: string;
            lockout?: number;
            maxReserved?: number;
            metrics?: boolean;
            networks?: boolean;
            period: number;
            rate: number;
            shards?: number;
            start?: number | null;
          };
          count?: number;
          details?: boolean;
          exact?: boolean;
          ip?: string;
          key?: string;
          name: string;
          raiseInCaller?: boolean;
          reserve?: boolean;
          throws?: boolean;
          tier?: string;
        },
        | { details?: any; ok: true; resetsAt?: number; retryAfter?: number }
        | {
            details?: any;
            error?: any;
            ok: false;
            resetsAt?: number;
            retryAfter: number;
          },
        Name
      >;
      resetRateLimit: FunctionReference<
        "mutation",
        "internal",
        {
          config?: {
            applyUpdates?: string;
            calendar?: {
              anchor: number;
              period: "day" | "week" | "month";
              timeZone: string;
            };
            capacity?: number;
            dryRun?: boolean;
            exact?: boolean;
            kind: string;
            lockout?: number;
            maxReserved?: number;
            metrics?: boolean;
            networks?: boolean;
            period: number;
            rate: number;
            shards?: number;
            start?: number | null;
          };
          key?: string;
          name: string;
        },
        null,
        Name
      >;
    };
    metrics: {
      fold: FunctionReference<
        "mutation",
        "internal",
        { batchSize?: number; retainFor?: number },
        { done: boolean; folded: number; pruned: number },
        Name
      >;
      get: FunctionReference<
        "query",
        "internal",
        { from: number; name: string; to: number; topKeys?: number },
        {
          buckets: Array<{
            admitted: number;
            admittedTokens: number;
            blocked: number;
            bucket: number;
            cancelled?: number;
            cancelledTokens?: number;
            overridden: number;
            queued?: number;
            refused: number;
            refusedTokens: number;
            reserved: number;
            reservedTokens: number;
            waitedMs?: number;
          }>;
          complete: boolean;
          from: number;
          heat?: {
            hot: boolean;
            maxWritesPerShard: number;
            mutationMs: number;
            recommend?: {
              applyUpdates: "transactionally" | "asynchronously";
              shards: number;
            };
            samples: number;
            writesPerShard: number;
          };
          to: number;
          top: Array<{ key?: string; refused: number; refusedTokens: number }>;
          total: {
            admitted: number;
            admittedTokens: number;
            blocked: number;
            cancelled?: number;
            cancelledTokens?: number;
            overridden: number;
            queued?: number;
            refused: number;
            refusedTokens: number;
            reserved: number;
            reservedTokens: number;
            waitedMs?: number;
          };
          unfolded: number;
        },
        Name
      >;
    };
    overrides: {
      get: FunctionReference<
        "query",
        "internal",
        {
          name: string;
          target: { key?: string } | { network: string } | { tier: string };
        },
        {
          note?: string;
          override:
            | {
                config:
                  | {
                      applyUpdates?: "transactionally" | "asynchronously";
                      capacity?: number;
                      dryRun?: boolean;
                      kind: "token bucket";
                      lockout?: number;
                      maxReserved?: number;
                      metrics?: boolean;
                      networks?: boolean;
                      period: number;
                      rate: number;
                      shards?: number;
                      start?: null;
                    }
                  | {
                      applyUpdates?: "transactionally" | "asynchronously";
                      calendar?: {
                        anchor: number;
                        period: "day" | "week" | "month";
                        timeZone: string;
                      };
                      capacity?: number;
                      dryRun?: boolean;
                      kind: "fixed window";
                      lockout?: number;
                      maxReserved?: number;
                      metrics?: boolean;
                      networks?: boolean;
                      period: number;
                      rate: number;
                      shards?: number;
                      start?: number;
                    }
                  | {
                      applyUpdates?: "transactionally" | "asynchronously";
                      capacity?: number;
                      dryRun?: boolean;
                      exact?: boolean;
                      kind: "sliding window";
                      lockout?: number;
                      maxReserved?: number;
                      metrics?: boolean;
                      networks?: boolean;
                      period: number;
                      rate: number;
                      shards?: number;
                      start?: number;
                    };
              }
            | { blockedUntil: number }
            | { allow: true };
          target: { key?: string } | { network: string } | { tier: string };
          updatedAt: number;
        } | null,
        Name
      >;
      list: FunctionReference<
        "query",
        "internal",
        {
          name: string;
          paginationOpts: {
            cursor: string | null;
            endCursor?: string | null;
            id?: number;
            maximumBytesRead?: number;
            maximumRowsRead?: number;
            numItems: number;
          };
          scope?: "key" | "network" | "tier";
        },
        {
          continueCursor: string;
          isDone: boolean;
          page: Array<{
            note?: string;
            override:
              | {
                  config:
                    | {
                        applyUpdates?: "transactionally" | "asynchronously";
                        capacity?: number;
                        dryRun?: boolean;
                        kind: "token bucket";
                        lockout?: number;
                        maxReserved?: number;
                        metrics?: boolean;
                        networks?: boolean;
                        period: number;
                        rate: number;
                        shards?: number;
                        start?: null;
                      }
                    | {
                        applyUpdates?: "transactionally" | "asynchronously";
                        calendar?: {
                          anchor: number;
                          period: "day" | "week" | "month";
                          timeZone: string;
                        };
                        capacity?: number;
                        dryRun?: boolean;
                        kind: "fixed window";
                        lockout?: number;
                        maxReserved?: number;
                        metrics?: boolean;
                        networks?: boolean;
                        period: number;
                        rate: number;
                        shards?: number;
                        start?: number;
                      }
                    | {
                        applyUpdates?: "transactionally" | "asynchronously";
                        capacity?: number;
                        dryRun?: boolean;
                        exact?: boolean;
                        kind: "sliding window";
                        lockout?: number;
                        maxReserved?: number;
                        metrics?: boolean;
                        networks?: boolean;
                        period: number;
                        rate: number;
                        shards?: number;
                        start?: number;
                      };
                }
              | { blockedUntil: number }
              | { allow: true };
            target: { key?: string } | { network: string } | { tier: string };
            updatedAt: number;
          }>;
          pageStatus?: "SplitRecommended" | "SplitRequired" | null;
          splitCursor?: string | null;
        },
        Name
      >;
      remove: FunctionReference<
        "mutation",
        "internal",
        {
          config: {
            applyUpdates?: string;
            calendar?: {
              anchor: number;
              period: "day" | "week" | "month";
              timeZone: string;
            };
            capacity?: number;
            dryRun?: boolean;
            exact?: boolean;
            kind: string;
            lockout?: number;
            maxReserved?: number;
            metrics?: boolean;
            networks?: boolean;
            period: number;
            rate: number;
            shards?: number;
            start?: number | null;
          };
          name: string;
          target: { key?: string } | { network: string } | { tier: string };
        },
        boolean,
        Name
      >;
      set: FunctionReference<
        "mutation",
        "internal",
        {
          config: {
            applyUpdates?: string;
            calendar?: {
              anchor: number;
              period: "day" | "week" | "month";
              timeZone: string;
            };
            capacity?: number;
            dryRun?: boolean;
            exact?: boolean;
            kind: string;
            lockout?: number;
            maxReserved?: number;
            metrics?: boolean;
            networks?: boolean;
            period: number;
            rate: number;
            shards?: number;
            start?: number | null;
          };
          name: string;
          note?: string;
          override:
            | {
                config:
                  | {
                      applyUpdates?: "transactionally" | "asynchronously";
                      capacity?: number;
                      dryRun?: boolean;
                      kind: "token bucket";
                      lockout?: number;
                      maxReserved?: number;
                      metrics?: boolean;
                      networks?: boolean;
                      period: number;
                      rate: number;
                      shards?: number;
                      start?: null;
                    }
                  | {
                      applyUpdates?: "transactionally" | "asynchronously";
                      calendar?: {
                        anchor: number;
                        period: "day" | "week" | "month";
                        timeZone: string;
                      };
                      capacity?: number;
                      dryRun?: boolean;
                      kind: "fixed window";
                      lockout?: number;
                      maxReserved?: number;
                      metrics?: boolean;
                      networks?: boolean;
                      period: number;
                      rate: number;
                      shards?: number;
                      start?: number;
                    }
                  | {
                      applyUpdates?: "transactionally" | "asynchronously";
                      capacity?: number;
                      dryRun?: boolean;
                      exact?: boolean;
                      kind: "sliding window";
                      lockout?: number;
                      maxReserved?: number;
                      metrics?: boolean;
                      networks?: boolean;
                      period: number;
                      rate: number;
                      shards?: number;
                      start?: number;
                    };
              }
            | { blockedUntil: number }
            | { allow: true };
          target: { key?: string } | { network: string } | { tier: string };
        },
        null,
        Name
      >;
    };
    runs: {
      cancelRun: FunctionReference<
        "mutation",
        "internal",
        {
          configs?: Record<
            string,
            {
              applyUpdates?: string;
              calendar?: {
                anchor: number;
                period: "day" | "week" | "month";
                timeZone: string;
              };
              capacity?: number;
              dryRun?: boolean;
              exact?: boolean;
              kind: string;
              lockout?: number;
              maxReserved?: number;
              metrics?: boolean;
              networks?: boolean;
              period: number;
              rate: number;
              shards?: number;
              start?: number | null;
            }
          >;
          id: string;
        },
        | { cancelled: true; credited: number }
        | {
            cancelled: false;
            state: "inProgress" | "success" | "failed" | "canceled" | "unknown";
          },
        Name
      >;
      checkRun: FunctionReference<
        "query",
        "internal",
        {
          config: {
            applyUpdates?: string;
            calendar?: {
              anchor: number;
              period: "day" | "week" | "month";
              timeZone: string;
            };
            capacity?: number;
            dryRun?: boolean;
            exact?: boolean;
            kind: string;
            lockout?: number;
            maxReserved?: number;
            metrics?: boolean;
            networks?: boolean;
            period: number;
            rate: number;
            shards?: number;
            start?: number | null;
          };
          count?: number;
          fn?: string;
          fnArgs?: any;
          ip?: string;
          key?: string;
          maxWait: number;
          name: string;
          tier?: string;
        },
        | { id?: string; ok: true; runAt: number }
        | { ok: false; retryAfter: number },
        Name
      >;
      deleteOver: FunctionReference<
        "mutation",
        "internal",
        { after?: { created: number; runAt: number }; batchSize?: number },
        { deleted: number; done: boolean },
        Name
      >;
      runWhenAllowed: FunctionReference<
        "mutation",
        "internal",
        {
          config: {
            applyUpdates?: string;
            calendar?: {
              anchor: number;
              period: "day" | "week" | "month";
              timeZone: string;
            };
            capacity?: number;
            dryRun?: boolean;
            exact?: boolean;
            kind: string;
            lockout?: number;
            maxReserved?: number;
            metrics?: boolean;
            networks?: boolean;
            period: number;
            rate: number;
            shards?: number;
            start?: number | null;
          };
          count?: number;
          fn?: string;
          fnArgs?: any;
          ip?: string;
          key?: string;
          maxWait: number;
          name: string;
          tier?: string;
        },
        | { id?: string; ok: true; runAt: number }
        | { ok: false; retryAfter: number },
        Name
      >;
    };
  };
