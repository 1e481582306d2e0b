/**
 * Places in line, in this process, one line a key (a node, a lock file): acts that want
 * the same node take turns here before they ask the store's own lock, so that they do not
 * poll it against each other or hold a connection while they wait. Lines of different
 * keys do not wait on each other. Standards only.
 */
export type Lines = Map<string, Promise<unknown>>;

/** A place in line. */
export interface Turn {
  /** Whether the turn came within the wait. */
  inTime: boolean;
  /** Passes the turn on; a turn that did not come in time passes once the one before it has. */
  pass(): void;
}

/** Waits for this process's turn at `key`, at most `waitMs`. */
export function waitTurn(lines: Lines, key: string, waitMs: number): Promise<Turn> {
  let letGo: () => void = () => {};
  const turn = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  const before = lines.get(key) ?? Promise.resolve();
  const mine = before.then(() => turn);
  lines.set(key, mine);
  // The last in line leaves no entry behind: a fleet of nodes leaves no map of them.
  void mine.then(() => {
    if (lines.get(key) === mine) lines.delete(key);
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), waitMs);
  });
  return Promise.race([before.then(() => 'ours' as const), late]).then((won) => {
    clearTimeout(timer);
    let passed = false;
    return {
      inTime: won === 'ours',
      pass() {
        if (passed) return;
        passed = true;
        // Our place passes on: when we never had it, the next waits on the one before us.
        if (won === 'ours') letGo();
        else void before.then(letGo);
      },
    };
  });
}
