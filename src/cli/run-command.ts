import { userInfo } from 'node:os';
import type { CommandContext } from '../commands/context.ts';
import { type Command, missingFields, runCommand } from '../commands/table.ts';
import { machinesOf } from '../machines/reach.ts';
import type { CommandRequest } from '../request.ts';
import { openFileStores } from '../stores/file-store.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { storesCannotOpen } from '../stores/stores.ts';
import { EXIT, type Io } from './io.ts';

/**
 * Runs one of the five commands for the command line: the same function, the same
 * required-field words and the same store failure words as the Command API.
 */
export async function runFromCli(
  command: Command,
  request: CommandRequest,
  options: { location: StateLocation; mint: string[]; json: boolean },
  io: Io,
): Promise<number> {
  // Lines an act said as it went are printed then; `said` is printed less those.
  const shown: string[] = [];
  const say = (said: string, refused?: string) => {
    if (options.json) {
      io.out(JSON.stringify(refused === undefined ? { said } : { said, refused }));
      return;
    }
    const rest = said.split('\n').slice(shown.length).join('\n');
    if (rest) io.out(rest);
    if (refused !== undefined) io.err(refused);
  };

  const missing = missingFields(command, request);
  // Refused before the command ran: as over the API (400, 503), there is no `said`.
  const refuseBefore = (refused: string) => {
    if (options.json) io.out(JSON.stringify({ refused }));
    else io.err(refused);
  };
  if (missing) {
    refuseBefore(missing);
    return EXIT.usage;
  }
  let stores: Awaited<ReturnType<typeof openFileStores>>;
  try {
    stores = await openFileStores(options.location);
  } catch (error) {
    refuseBefore(storesCannotOpen(error));
    return EXIT.stores;
  }
  // Ctrl-C during an act stops its hook and lets it record what it did; a second one
  // ends berth at once (the stores stay whole: every write is atomic).
  const interrupted = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted.signal.aborted) process.exit(130);
    interrupted.abort(`berth was interrupted by ${signal}`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const context: CommandContext = {
      stores,
      signal: interrupted.signal,
      reach: machinesOf(stores.settings),
      actor: osUser(io),
      via: 'cli',
      now: () => new Date(),
      mint: options.mint,
      progress: options.json
        ? undefined
        : (line) => {
            io.out(line);
            shown.push(line);
          },
    };
    const outcome = await runCommand(command, request, context);
    say(outcome.said, outcome.error);
    return outcome.error === undefined ? EXIT.done : EXIT.refused;
  } catch (error) {
    say('', storesCannotOpen(error));
    return EXIT.stores;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stores.close().catch(() => {});
  }
}

function osUser(io: Io): string {
  try {
    return userInfo().username;
  } catch {
    return io.env.USER ?? `uid ${process.getuid?.() ?? '?'}`;
  }
}
