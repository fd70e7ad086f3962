/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The deployment's URL, written to .env.local by `convex dev`. Unset or empty: offline mode. */
  readonly VITE_CONVEX_URL?: string;
}

interface ImportMeta {
  readonly env: ImportMetaEnv;
}
