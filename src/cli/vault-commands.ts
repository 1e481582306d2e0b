import { openAct } from '../commands/act.ts';
import { answerOf } from '../commands/answer.ts';
import { rekey } from '../commands/rekey.ts';
import { readSecret } from '../commands/secret.ts';
import type { CommandShape } from '../commands/table.ts';
import type { StateLocation } from '../config/state-dir.ts';
import type { CommandRequest } from '../request.ts';
import { type CommandAnswer, enveloped } from '../result.ts';
import { secretText } from '../secrets.ts';
import type { Resealed } from '../stores/stores.ts';
import { VaultError } from '../vault/seal.ts';
import { stateDeps } from './deps.ts';
import { EXIT, type Io, UsageError } from './io.ts';
import { readingFailed, vaultRefused } from './reading-failed.ts';
import { osUser } from './run-command.ts';

const REKEY: CommandShape = {
  name: 'rekey',
  needs: ['node'],
  summary: 'Seal every kept secret again to the recipients in berth.json',
  options: [],
  run: rekey,
  recordsAlone: true,
};

/**
 * `berth rekey [node]`: every node with records (or the one named) as one target, through
 * the runner: one act a node, each journaled; and, for the whole state, the state's CA.
 * Exits 0 when every value was sealed again, 1 when a value could not be opened (named,
 * and kept as it was) or berth.json is not valid, 3 when the stores fail.
 */
export async function runRekey(
  node: string | undefined,
  location: StateLocation,
  json: boolean,
  io: Io,
): Promise<number> {
  const deps = stateDeps(location, io.env);
  let target: string;
  let ca: Resealed | undefined;
  try {
    await deps.stores.open();
    target = node ?? (await deps.stores.listNodes()).join(',');
    // The CA is the state's, not a node's: sealed again when the whole state is.
    if (node === undefined && (await deps.stores.readCa())) ca = await deps.stores.resealCa();
  } catch (error) {
    if (error instanceof VaultError) return vaultRefused(error, io, json);
    return readingFailed(error, io, { json });
  }
  try {
    const caPart = ca && { ca: { resealed: ca.resealed === 1 } };
    const caExit = ca && ca.unopened.length > 0 ? EXIT.refused : EXIT.done;
    if (ca && !json)
      if (ca.resealed === 1) io.out("sealed the state's CA again to the recipients of now");
      else
        io.err(
          "berth's identity cannot open the key of the state's CA; kept as sealed before: rekey again with an identity it was sealed to",
        );
    if (target === '') {
      io.out(
        json
          ? JSON.stringify({ ...answerOf({}), ...caPart })
          : ca
            ? 'no node has records: nothing else to seal again'
            : 'no node has records: nothing to seal again',
      );
      return caExit;
    }
    const ran = await runOne(REKEY, { node: target, module: '', yes: false }, deps, io);
    if (json) io.out(JSON.stringify({ ...ran.answer, ...caPart }));
    else {
      if (ran.answer.said) io.out(ran.answer.said);
      if (ran.answer.refused) io.err(ran.answer.refused);
    }
    return ran.exit === EXIT.done ? caExit : ran.exit;
  } finally {
    await deps.stores.close();
  }
}

/**
 * `berth secret <node> <module> <name>`: prints the kept value on standard output (one
 * line: a file's last newline is not doubled), and nothing else there; the act is
 * journaled as who read what.
 */
export async function runSecret(
  words: readonly string[],
  location: StateLocation,
  json: boolean,
  io: Io,
): Promise<number> {
  const [node, module, name, ...more] = words;
  if (node === undefined || module === undefined || name === undefined || more.length > 0)
    throw new UsageError('berth secret takes a node, a module and a secret name');
  let value: Uint8Array | undefined;
  const command: CommandShape = {
    name: 'secret',
    needs: ['node', 'module'],
    summary: 'Print a kept secret',
    options: [],
    run: readSecret(name, (kept) => {
      value = kept;
    }),
  };
  const deps = stateDeps(location, io.env);
  try {
    const { answer, exit } = await runOne(command, { node, module, yes: false }, deps, io);
    if (answer.refused !== undefined) {
      if (json) io.out(JSON.stringify(enveloped({ refused: answer.refused, code: answer.code })));
      else io.err(answer.refused);
      return exit;
    }
    const text = secretText(value ?? new Uint8Array());
    io.out(json ? JSON.stringify(enveloped({ value: text })) : text);
    return EXIT.done;
  } finally {
    await deps.stores.close();
  }
}

/** A command run through the runner, its answer typed, and its exit code. */
async function runOne(
  command: CommandShape,
  request: CommandRequest,
  deps: ReturnType<typeof stateDeps>,
  io: Io,
): Promise<{ answer: Pick<CommandAnswer, 'said' | 'refused' | 'code'>; exit: number }> {
  const opened = await openAct(command, request, deps, { actor: osUser(io), via: 'cli', mint: [] });
  if (opened.kind !== 'ready') {
    const exit = opened.kind === 'missing' ? EXIT.usage : EXIT.stores;
    return { answer: { said: '', refused: opened.refused, code: opened.code }, exit };
  }
  const outcome = await opened.run();
  const exit = outcome.storeFailed
    ? EXIT.stores
    : outcome.error === undefined
      ? EXIT.done
      : EXIT.refused;
  return { answer: answerOf(outcome), exit };
}
