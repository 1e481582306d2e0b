/**
 * How long a test waits for what it expects (a line, a state, an exit) before failing with
 * words rather than hanging: a bound against a hang, not a measurement. How fast berth is
 * is `npm run bench`'s to say.
 */
export const SAFETY_MS = 60_000;
