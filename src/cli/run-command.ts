import { userInfo } from 'node:os';
import { missingFields, openAct } from '../commands/act.ts';
import { HOOK_LINE } from '../commands/context.ts';
import type { CommandShape as Command } from '../commands/table.ts';
import type { StateLocation } from '../config/state-dir.ts';
import type { CommandRequest } from '../request.ts';
import { stateDeps } from './deps.ts';
import { EXIT, type Io } from './io.ts';
import { sayingWhenWaiting } from './lock-wait.ts';

/**
 * Runs one of the five commands for the command line, through the same act runner as
 * the Command API: the same required-field words, the same store failure words.
 */
export async function runFromCli(
  command: Command,
  request: CommandRequest,
  options: {
    location: StateLocation;
    mint: string[];
    fullDiff: boolean;
    json: boolean;
    lockWaitMs: number;
  },
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
  // Refused before the command ran: as over the API (400, 503), there is no `said`.
  const refuseBefore = (refused: string) => {
    if (options.json) io.out(JSON.stringify({ refused }));
    else io.err(refused);
  };

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
    // As over the API, a request without its fields is refused before the stores open.
    const missing = missingFields(command, request);
    if (missing) {
      refuseBefore(missing);
      return EXIT.usage;
    }
    const deps = stateDeps(options.location, io.env, { lockWaitMs: options.lockWaitMs });
    const stores = sayingWhenWaiting(deps.stores, (line) => io.err(line));
    const opened = await openAct(
      command,
      request,
      { ...deps, stores },
      {
        actor: osUser(io),
        via: 'cli',
        mint: options.mint,
        fullDiff: options.fullDiff,
        signal: interrupted.signal,
        progress: options.json
          ? undefined
          : (line) => {
              // A hook's own lines were streamed as it wrote them: said keeps its last ones.
              if (!line.startsWith(HOOK_LINE)) io.out(line);
              shown.push(line);
            },
        output: options.json ? undefined : (line) => io.out(line),
      },
    );
    if (opened.kind === 'missing') {
      refuseBefore(opened.refused);
      return EXIT.usage;
    }
    if (opened.kind === 'stores') {
      refuseBefore(opened.refused);
      return EXIT.stores;
    }
    const outcome = await opened.run();
    say(outcome.said, outcome.error);
    if (outcome.storeFailed) return EXIT.stores;
    return outcome.error === undefined ? EXIT.done : EXIT.refused;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Who acts on the command line: the OS user. */
export function osUser(io: Io): string {
  try {
    return userInfo().username;
  } catch {
    return io.env.USER ?? `uid ${process.getuid?.() ?? '?'}`;
  }
}
