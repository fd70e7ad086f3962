// Placeholder: the React hook `useRateLimit` lands with the React issue.
export {};
