import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Where the state directory is, and whether berth may create it. */
export interface StateLocation {
  dir: string;
  /** Only the default location is created on first use; a named one must exist. */
  createIfMissing: boolean;
}

/** `--state DIR`, else `$BERTH_STATE`, else `$XDG_STATE_HOME/berth`, else `~/.local/state/berth`. */
export function locateState(flag: string | undefined, env = process.env): StateLocation {
  if (flag) return { dir: resolve(flag), createIfMissing: false };
  if (env.BERTH_STATE) return { dir: resolve(env.BERTH_STATE), createIfMissing: false };
  if (env.XDG_STATE_HOME)
    return { dir: join(resolve(env.XDG_STATE_HOME), 'berth'), createIfMissing: true };
  return { dir: join(homedir(), '.local', 'state', 'berth'), createIfMissing: true };
}
