// rowOf copies a stored row's fields one by one, each by name (a loop over the names costs several
// times more on every read): every field the schema gives a row must be among them, in the order
// `storedRowFields` declares, and a field a document lacks stays absent.
import { describe, expect, test } from "vitest";
import { rowOf } from "../src/component/store.js";
import { storedRowFields } from "../src/shared/shapes/stored.js";
import type { Doc } from "../src/component/_generated/dataModel.js";

/** A document of `rateLimits` with `fields` besides its id, creation time, name and key. */
function docWith(fields: Record<string, unknown>): Doc<"rateLimits"> {
  return { _id: "id", _creationTime: 1, name: "limit", key: "user", ...fields } as unknown as Doc<"rateLimits">;
}

describe("rowOf", () => {
  test("copies every field a stored row may have, in storedRowFields' order, and no other", () => {
    const names = Object.keys(storedRowFields);
    // Each field a value of its own, to see each copied from its own field.
    const fields = Object.fromEntries(names.map((name, i) => [name, `${name}-${i}`]));
    const row = rowOf(docWith(fields));
    expect(Object.keys(row)).toEqual(["id", ...names]);
    expect(row).toEqual({ id: "id", ...fields });
  });

  test("leaves out the fields a document lacks, and those it holds as undefined", () => {
    const row = rowOf(docWith({ shard: 0, value: 3, ts: 5, h: 7, u: undefined }));
    expect(Object.keys(row)).toEqual(["id", "shard", "value", "ts", "h"]);
    expect(row).toEqual({ id: "id", shard: 0, value: 3, ts: 5, h: 7 });
  });
});
