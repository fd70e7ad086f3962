// Entry point. With VITE_CONVEX_URL set (`npm run dev` writes it), the UI runs against that
// deployment; without it, it opens in offline what-if mode.
import { ConvexProvider, ConvexReactClient } from "convex/react";
import { SessionProvider } from "convex-helpers/react/sessions";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
import "./styles.css";

const url = import.meta.env.VITE_CONVEX_URL?.trim() ?? "";
const container = document.getElementById("root");
if (container === null) throw new Error("index.html has no #root element");

createRoot(container).render(
  <StrictMode>
    {url === "" ? (
      <App live={false} />
    ) : (
      <ConvexProvider client={new ConvexReactClient(url)}>
        <SessionProvider>
          <App live />
        </SessionProvider>
      </ConvexProvider>
    )}
  </StrictMode>,
);
