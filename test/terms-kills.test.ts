// A limit's terms to the character (src/shared/shards/terms.ts): the text each config and shard records, calendars in it, its fingerprint (cached per terms), reading terms back, and which text isn't terms.
import { describe, expect, test, vi } from "vitest";
import { DAY, SECOND } from "../src/shared/kinds/algebra.js";
import { shardParams } from "../src/shared/shards/layout.js";
import { calendarIn, calendarTerms, configHash, configTerms, sameCalendar, termsConfig, termsHash, termsOf } from "../src/shared/shards/terms.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const utcDay = { period: "day" as const, timeZone: "UTC", anchor: 0 };
const quota = (calendar: { period: "day" | "week" | "month"; timeZone: string; anchor: number }): RateLimitConfig => ({ kind: "fixed window", rate: 100, period: DAY, calendar });

describe("the terms a config records", () => {
  test("each kind's text, exactly", () => {
    expect(configTerms({ kind: "token bucket", rate: 10, period: SECOND })).toBe('["token bucket",10,1000,10,1,null]');
    expect(configTerms({ kind: "token bucket", rate: 10, period: SECOND, capacity: 30, shards: 2, start: null })).toBe('["token bucket",10,1000,30,2,null]');
    expect(configTerms({ kind: "fixed window", rate: 10, period: SECOND, start: 2250 })).toBe('["fixed window",10,1000,10,1,250]');
    expect(configTerms({ kind: "fixed window", rate: 10, period: SECOND, start: -250 })).toBe('["fixed window",10,1000,10,1,750]');
    expect(configTerms({ kind: "fixed window", rate: 10, period: SECOND })).toBe('["fixed window",10,1000,10,1,null]');
    expect(configTerms({ kind: "sliding window", rate: 10, period: SECOND, exact: false, start: 1100 })).toBe('["sliding window",10,1000,10,1,100]');
    expect(configTerms({ kind: "sliding window", rate: 10, period: SECOND })).toBe('["exact sliding window",10,1000,10,1,null]');
  });

  test("a calendar quota's calendar is a seventh member, and its windows have no start", () => {
    expect(configTerms(quota(utcDay))).toBe('["fixed window",100,86400000,100,1,null,["day","UTC",0]]');
    expect(configTerms(quota({ period: "month", timeZone: "Europe/Paris", anchor: 31 }))).toBe('["fixed window",100,86400000,100,1,null,["month","Europe/Paris",31]]');
    expect(calendarIn(quota(utcDay))).toBe(utcDay);
    expect(calendarIn({ kind: "fixed window", rate: 10, period: SECOND })).toBe(undefined);
  });

  test("a shard's terms are the whole limit's, with its phase (none for the unwindowed kinds)", () => {
    expect(shardParams({ kind: "fixed window", rate: 10, period: SECOND, shards: 2 }, 250, 1).terms).toBe('["fixed window",10,1000,10,2,250]');
    expect(shardParams(quota(utcDay), 0, 0).terms).toBe('["fixed window",100,86400000,100,1,0,["day","UTC",0]]');
    expect(termsOf("fixed window", 10, 1000, 10, 1, 250)).toBe('["fixed window",10,1000,10,1,250]');
    expect(termsOf("sliding window", 10, 1000, 10, 1, 250)).toBe('["sliding window",10,1000,10,1,250]');
    expect(termsOf("token bucket", 10, 1000, 10, 1, 250)).toBe('["token bucket",10,1000,10,1,0]');
    expect(termsOf("exact sliding window", 10, 1000, 10, 1, 250)).toBe('["exact sliding window",10,1000,10,1,0]');
    expect(termsOf("fixed window", 100, DAY, 100, 1, 0, { period: "week", timeZone: "Asia/Tokyo", anchor: 3 })).toBe('["fixed window",100,86400000,100,1,0,["week","Asia/Tokyo",3]]');
  });
});

describe("fingerprints", () => {
  test("a config's fingerprint is its terms' fingerprint, asked once or again", () => {
    const configs: RateLimitConfig[] = [
      { kind: "token bucket", rate: 10, period: SECOND },
      { kind: "fixed window", rate: 10, period: SECOND, start: 250 },
      quota(utcDay),
      quota({ period: "week", timeZone: "UTC", anchor: 0 }),
    ];
    for (const config of configs) {
      expect(configHash(config)).toBe(termsHash(configTerms(config)));
      expect(configHash(config)).toBe(termsHash(configTerms(config)));
    }
  });

  test("calendars that differ in one field give different fingerprints, even right after each other", () => {
    const calendars = [utcDay, { ...utcDay, period: "week" as const }, { ...utcDay, timeZone: "Europe/Paris" }, { ...utcDay, anchor: 6 }];
    const hashes = calendars.map((c) => configHash(quota(c)));
    expect(new Set(hashes).size).toBe(4);
    for (const [i, calendar] of calendars.entries()) {
      expect(configHash(quota(calendar))).toBe(hashes[i]);
      expect(configHash(quota({ ...calendar }))).toBe(hashes[i]);
    }
    // Going from a quota to the same window without a calendar, and back.
    const plain: RateLimitConfig = { kind: "fixed window", rate: 100, period: DAY };
    expect(configHash(plain)).toBe(termsHash('["fixed window",100,86400000,100,1,null]'));
    expect(configHash(quota(utcDay))).toBe(hashes[0]);
    expect(configHash(plain)).not.toBe(hashes[0]);
  });

  test("a start that changes the phase changes the fingerprint; one that doesn't, doesn't", () => {
    const a = configHash({ kind: "fixed window", rate: 10, period: SECOND, start: 250 });
    expect(configHash({ kind: "fixed window", rate: 10, period: SECOND, start: 1250 })).toBe(a);
    expect(configHash({ kind: "fixed window", rate: 10, period: SECOND, start: 500 })).not.toBe(a);
    expect(configHash({ kind: "fixed window", rate: 10, period: SECOND })).not.toBe(a);
  });
  test("asked again for the terms it fingerprinted last, it doesn't build their text again", () => {
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      const built = (config: RateLimitConfig): number => {
        const before = stringify.mock.calls.length;
        configHash(config);
        return stringify.mock.calls.length - before;
      };
      expect(built({ kind: "token bucket", rate: 7, period: SECOND })).toBe(1);
      // Equal terms in another object, and fields the terms leave out: no text built.
      expect(built({ kind: "token bucket", rate: 7, period: SECOND, capacity: 7, shards: 1, maxReserved: 3, dryRun: true })).toBe(0);
      expect(built(quota(utcDay))).toBe(1);
      expect(built(quota({ ...utcDay }))).toBe(0);
      expect(built(quota({ ...utcDay, anchor: 6 }))).toBe(1);
      expect(built({ kind: "fixed window", rate: 100, period: DAY })).toBe(1);
      expect(built({ kind: "fixed window", rate: 100, period: DAY })).toBe(0);
    } finally {
      stringify.mockRestore();
    }
  });
});

describe("sameCalendar", () => {
  test("none and none, one object, and equal fields are the same calendar", () => {
    expect(sameCalendar(undefined, undefined)).toBe(true);
    expect(sameCalendar(utcDay, utcDay)).toBe(true);
    expect(sameCalendar(utcDay, { ...utcDay })).toBe(true);
  });

  test("one missing, or any field different, is not", () => {
    expect(sameCalendar(utcDay, undefined)).toBe(false);
    expect(sameCalendar(undefined, utcDay)).toBe(false);
    expect(sameCalendar(utcDay, { ...utcDay, period: "week" })).toBe(false);
    expect(sameCalendar(utcDay, { ...utcDay, timeZone: "Europe/Paris" })).toBe(false);
    expect(sameCalendar(utcDay, { ...utcDay, anchor: 6 })).toBe(false);
  });
});

describe("terms read back", () => {
  test("each kind's config, exactly", () => {
    expect(termsConfig('["token bucket",10,1000,30,2,null]')).toEqual({ kind: "token bucket", rate: 10, period: 1000, capacity: 30, shards: 2 });
    // A shard's terms record 0 as a token bucket's phase: it is no start.
    expect(termsConfig(termsOf("token bucket", 10, 1000, 10, 1, 250))).toEqual({ kind: "token bucket", rate: 10, period: 1000, capacity: 10, shards: 1 });
    expect(termsConfig('["exact sliding window",10,1000,10,1,null]')).toEqual({ kind: "sliding window", rate: 10, period: 1000, capacity: 10, shards: 1, exact: true });
    expect(termsConfig('["sliding window",10,1000,10,1,250]')).toEqual({ kind: "sliding window", rate: 10, period: 1000, capacity: 10, shards: 1, exact: false, start: 250 });
    expect(termsConfig('["sliding window",10,1000,10,1,null]')).toEqual({ kind: "sliding window", rate: 10, period: 1000, capacity: 10, shards: 1, exact: false });
    expect(termsConfig('["fixed window",10,1000,20,1,250]')).toEqual({ kind: "fixed window", rate: 10, period: 1000, capacity: 20, shards: 1, start: 250 });
    expect(termsConfig('["fixed window",10,1000,20,1,null]')).toEqual({ kind: "fixed window", rate: 10, period: 1000, capacity: 20, shards: 1 });
  });

  test("a calendar quota's config, with no capacity of its own", () => {
    for (const period of ["day", "week", "month"] as const) {
      const calendar = { period, timeZone: "America/New_York", anchor: 1 };
      expect(termsConfig(configTerms(quota(calendar)))).toEqual({ kind: "fixed window", rate: 100, period: DAY, shards: 1, calendar });
      expect(termsConfig(termsOf("fixed window", 100, DAY, 100, 1, 0, calendar))).toEqual({ kind: "fixed window", rate: 100, period: DAY, shards: 1, calendar });
    }
  });

  test("text that isn't terms reads as none", () => {
    for (const text of [
      "not json",
      "{}",
      "[]",
      '["token bucket",10,1000,10,1]',
      '["fixed window",100,86400000,100,1,null,["day","UTC",0],1]',
      // A calendar on a kind that has none, or one that isn't a calendar.
      '["sliding window",10,1000,10,1,null,["day","UTC",0]]',
      '["token bucket",10,1000,10,1,0,["day","UTC",0]]',
      '["fixed window",100,86400000,100,1,null,["year","UTC",0]]',
      '["fixed window",100,86400000,100,1,null,"day"]',
      '["fixed window",100,86400000,100,1,null,null]',
      '["leaky bucket",10,1000,10,1,null]',
      // Fields of the wrong type, even where the config would default them.
      '["token bucket",10,1000,10,null,null]',
      '["token bucket",10,1000,null,1,null]',
      '["token bucket","10",1000,10,1,null]',
      '["token bucket",10,1000,10,1,"0"]',
      '["fixed window",10,1000,10,1,"250"]',
      // Terms of a config that isn't valid.
      '["token bucket",0,1000,10,1,null]',
    ]) {
      expect(termsConfig(text), text).toBe(undefined);
    }
  });
});

describe("calendarTerms", () => {
  test("each period's calendar", () => {
    expect(calendarTerms(["day", "UTC", 0])).toEqual({ period: "day", timeZone: "UTC", anchor: 0 });
    expect(calendarTerms(["week", "Asia/Tokyo", 3])).toEqual({ period: "week", timeZone: "Asia/Tokyo", anchor: 3 });
    expect(calendarTerms(["month", "Europe/Paris", 31])).toEqual({ period: "month", timeZone: "Europe/Paris", anchor: 31 });
  });

  test("anything else is none", () => {
    for (const cal of [undefined, null, 5, "day", "UTC", { 0: "day", 1: "UTC", 2: 0, length: 3 }, [], ["day", "UTC"], ["day", "UTC", 0, 1], ["year", "UTC", 0], ["", "UTC", 0], ["Day", "UTC", 0], ["day", 5, 0], ["day", null, 0], ["day", "UTC", "0"], ["week", "UTC", null]]) {
      expect(calendarTerms(cal), JSON.stringify(cal)).toBe(undefined);
    }
  });
});
