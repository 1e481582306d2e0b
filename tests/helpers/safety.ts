/**
 * How long a test waits for what it expects (a line, a state, an exit) before failing with
 * words rather than hanging: a bound against a hang, not a measurement. How fast berth is
 * is `npm run bench`'s to say.
 */
export const SAFETY_MS = 60_000;

/** Waits until `ready()` holds, asking every 25 ms; fails naming `what` after `SAFETY_MS`. */
export async function until(ready: () => boolean | Promise<boolean>, what: string) {
  const giveUp = Date.now() + SAFETY_MS;
  while (!(await ready())) {
    if (Date.now() > giveUp) throw new Error(`${what}: not so after ${SAFETY_MS / 1000} s`);
    await new Promise((done) => setTimeout(done, 25));
  }
}
