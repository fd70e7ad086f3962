// The outbox against the deployment: `emails.queue` schedules each email at the first instant the
// provider's limit (`outboundEmails`, 100 in any hour) allows it, `emails.outbox` lists this
// session's emails, and `emails.cancel` takes back one that hasn't gone.
import { useSessionMutation, useSessionQuery } from "convex-helpers/react/sessions";
import type { Id } from "../../convex/_generated/dataModel.js";
import { api } from "../../convex/_generated/api.js";
import { OutboxView, type OutboxEmail } from "../outbox/OutboxView.js";

export function LiveOutbox() {
  const list = useSessionQuery(api.emails.outbox, {});
  const queue = useSessionMutation(api.emails.queue);
  const cancel = useSessionMutation(api.emails.cancel);
  const emails: OutboxEmail[] | undefined = list?.map((e) => ({ id: e._id, to: e.to, subject: e.subject, status: e.status, runAt: e.runAt }));
  return (
    <OutboxView
      emails={emails}
      onQueue={async (to, subject) => await queue({ to, subject })}
      onCancel={async (id) => await cancel({ emailId: id as Id<"emails"> })}
      policy="The email provider takes 100 in any hour: past that, emails wait their turn, in order, instead of being refused."
    />
  );
}
