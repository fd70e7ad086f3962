// Stands in for upstream's component/setup.test.ts: the component tests build
// `convexTest(schema, modules)` with our component's modules (their `./schema.js` is ours too).
import { modules } from "../../src/test.js";

export { modules };
