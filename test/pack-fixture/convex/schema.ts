// The app keeps no tables of its own: the rate limiter's state lives inside the component.
import { defineSchema } from "convex/server";

export default defineSchema({});
