// convex-test needs at least one app module to find the app's root folder.
export {};
