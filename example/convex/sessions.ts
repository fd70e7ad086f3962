// Function builders for anonymous users, identified by a session ID the browser keeps (see
// convex-helpers' `SessionProvider` and `useSessionMutation`). Not functions themselves.
import { customMutation, customQuery } from "convex-helpers/server/customFunctions";
import { SessionIdArg } from "convex-helpers/server/sessions";
import { mutation, query } from "./_generated/server.js";

// #region sessions
/** A mutation taking the caller's `sessionId`, handed to the handler as `ctx.sessionId`. */
export const sessionMutation = customMutation(mutation, {
  args: SessionIdArg,
  input: async (_ctx, { sessionId }) => ({ ctx: { sessionId }, args: {} }),
});
// #endregion sessions

/** A query taking the caller's `sessionId`, handed to the handler as `ctx.sessionId`. */
export const sessionQuery = customQuery(query, {
  args: SessionIdArg,
  input: async (_ctx, { sessionId }) => ({ ctx: { sessionId }, args: {} }),
});
