// The example UI: a rate-limited chat box, the Playground and the Monitor, with the Monitor's admin
// view of the app's limits. Live against a deployment when one is configured; otherwise against
// the same functions run in the browser.
import { ConnectionStatus } from "./live/ConnectionStatus.js";
import { LiveAdmin } from "./live/LiveAdmin.js";
import { LiveChat } from "./live/LiveChat.js";
import { LiveOutbox } from "./live/LiveOutbox.js";
import { LivePlayground } from "./live/LivePlayground.js";
import { LiveSignUp } from "./live/LiveSignUp.js";
import { OfflineAdmin } from "./offline/OfflineAdmin.js";
import { OfflineChat } from "./offline/OfflineChat.js";
import { OfflinePlayground } from "./offline/OfflinePlayground.js";

/** Shown when no deployment is configured, so no one mistakes the simulation for the server. */
function OfflineBanner() {
  return (
    <aside className="banner" aria-labelledby="offline-heading" data-testid="offline-banner">
      <h2 id="offline-heading">Offline: the app runs in your browser</h2>
      <p>
        No Convex deployment is configured (<code>VITE_CONVEX_URL</code> is not set), so nothing here talks to a
        server. Instead the example app&apos;s own Convex functions and the rate limiter component run in your
        browser, on convex-test: every decision below is the component&apos;s. <strong>Live mode needs a
        deployment:</strong> run <code>npm run dev</code> with a Convex account, or against a self-hosted Convex
        backend.
      </p>
    </aside>
  );
}

export function App({ live }: { live: boolean }) {
  return (
    <>
      <header className="site-header">
        <h1>convex-rate-limiter</h1>
        <p>
          An exact, sharded rate limiter for Convex. {live ? <ConnectionStatus /> : "Offline demo."}
        </p>
      </header>
      <main>
        {!live && <OfflineBanner />}
        <section className="panel chat-panel" aria-labelledby="chat-heading">
          <h2 id="chat-heading">Chat</h2>
          <p className="panel-note">
            Limited by the app&apos;s <code>sendMessage</code> limit
            {live ? ", per session, on the server." : ", per session, in this tab's in-browser deployment."}
          </p>
          {live ? <LiveChat /> : <OfflineChat />}
        </section>
        {live && (
          <section className="panel signup-panel" aria-labelledby="signup-heading">
            <h2 id="signup-heading">Sign up</h2>
            <p className="panel-note">
              Limited by the app&apos;s <code>freeTrialSignUp</code> limit: 100 free-trial accounts an hour for
              everyone together, on the server.
            </p>
            <LiveSignUp />
          </section>
        )}
        {live && (
          <section className="panel outbox-panel" aria-labelledby="outbox-heading">
            <h2 id="outbox-heading">Outbox</h2>
            <p className="panel-note">
              Emails wait for the app&apos;s <code>outboundEmails</code> limit (<code>runWhenAllowed</code>), on the
              server.
            </p>
            <LiveOutbox />
          </section>
        )}
        {live ? <LivePlayground /> : <OfflinePlayground />}
        {live ? <LiveAdmin /> : <OfflineAdmin />}
      </main>
      <footer className="site-footer">
        <p>
          Source: <code>example/</code>. See the README for the API and the differences from{" "}
          <code>@convex-dev/rate-limiter</code>.
        </p>
      </footer>
    </>
  );
}
