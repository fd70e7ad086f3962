// Function builders for anonymous users, identified by a session ID the browser keeps (see
// convex-helpers' `SessionProvider` and `useSessionMutation`). Not functions themselves.
// #region sessions
import { customMutation, customQuery } from "convex-helpers/server/customFunctions";
import { SessionIdArg } from "convex-helpers/server/sessions";
import { mutation, query } from "./_generated/server.js";

/** A mutation taking the caller's `sessionId`, handed to the handler as `ctx.sessionId`. */
export const sessionMutation = customMutation(mutation, {
  args: SessionIdArg,
  input: async (_ctx, { sessionId }) => ({ ctx: { sessionId }, args: {} }),
});

/** A query taking the caller's `sessionId`, handed to the handler as `ctx.sessionId`. */
export const sessionQuery = customQuery(query, {
  args: SessionIdArg,
  input: async (_ctx, { sessionId }) => ({ ctx: { sessionId }, args: {} }),
});
// #endregion sessions
