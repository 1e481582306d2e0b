/**
 * Files of this machine a test changes (a node whose root is `/`, the machine's apt), given
 * back exactly as the test found them: the same bytes, mode, owner and group, or no file
 * where there was none. A developer's or CI's machine keeps its own `policy-rc.d`, apt
 * configuration and service files whatever the test does or however it ends: `giveBack`
 * runs from the suite's `after`, and, should that never run, when the test's process exits
 * or is told to stop (Ctrl-C's SIGINT, a runner's SIGTERM, a closed terminal's SIGHUP),
 * after which the signal ends the process as it would have.
 */
import {
  chmodSync,
  chownSync,
  lstatSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { constants as osConstants } from 'node:os';

/** A file as found: its bytes and attributes, or that there was none. */
type Found =
  | { path: string; there: false }
  | { path: string; there: true; bytes: Buffer; mode: number; uid: number; gid: number };

export interface KeptFiles {
  /** What was found, for a test to compare with what is there now. */
  readonly found: readonly Found[];
  /** Puts every file back as found; then no more at exit. */
  giveBack(): void;
}

/** Notes each path as it is now, to be given back. Only plain files, or nothing, are kept. */
export function keepAsFound(...paths: string[]): KeptFiles {
  const found = paths.map(foundAt);
  const giveBack = () => {
    process.off('exit', giveBack);
    for (const signal of SIGNALS) process.off(signal, onSignal);
    found.forEach(putBack);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    giveBack();
    // With no other listener the signal's own action ends the process; else as a shell would.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    else process.exit(128 + osConstants.signals[signal]);
  };
  process.on('exit', giveBack);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return { found, giveBack };
}

/** The signals that end a test's process early, after which what it kept is given back. */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Whether `path` is now as it was found: the same bytes, mode, owner and group, or none. */
export function asFound(kept: KeptFiles): boolean {
  return kept.found.every((was) => {
    const now = foundAt(was.path);
    if (!was.there || !now.there) return was.there === now.there;
    return (
      now.bytes.equals(was.bytes) &&
      now.mode === was.mode &&
      now.uid === was.uid &&
      now.gid === was.gid
    );
  });
}

function foundAt(path: string): Found {
  const info = lstatSync(path, { throwIfNoEntry: false });
  if (!info) return { path, there: false };
  if (!info.isFile()) throw new Error(`${path} is not a plain file: a test cannot keep it`);
  const { mode, uid, gid } = info;
  return { path, there: true, bytes: readFileSync(path), mode: mode & 0o7777, uid, gid };
}

/** Put back in one rename, so that the file is never missing meanwhile. */
function putBack(was: Found) {
  if (!was.there) {
    rmSync(was.path, { force: true, recursive: true });
    return;
  }
  const beside = `${was.path}.berth-test-${process.pid}`;
  writeFileSync(beside, was.bytes, { mode: was.mode });
  chownSync(beside, was.uid, was.gid);
  // After the owner: a chown clears the set-id bits, and the umask cut the mode written.
  chmodSync(beside, was.mode);
  if (lstatSync(was.path, { throwIfNoEntry: false })?.isDirectory())
    rmSync(was.path, { recursive: true });
  renameSync(beside, was.path);
}
