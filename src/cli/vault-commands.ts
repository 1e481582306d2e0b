import type { Code } from '../codes.ts';
import { openAct } from '../commands/act.ts';
import { codeOf } from '../commands/answer.ts';
import { rekey } from '../commands/rekey.ts';
import { readSecret } from '../commands/secret.ts';
import type { CommandShape } from '../commands/table.ts';
import type { StateLocation } from '../config/state-dir.ts';
import type { CommandRequest } from '../request.ts';
import { enveloped } from '../result.ts';
import { saidOf } from '../said.ts';
import { secretText } from '../secrets.ts';
import { stateDeps } from './deps.ts';
import { EXIT, type Io, UsageError } from './io.ts';
import { readingFailed } from './reading-failed.ts';
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
 * `berth rekey [node]`: every node with records (or the one named), one act a node, each
 * journaled. Exits 0 when every value was sealed again, 1 when a value could not be
 * opened (named, and kept as it was) or berth.json is not valid, 3 when the stores fail.
 */
export async function runRekey(
  node: string | undefined,
  location: StateLocation,
  json: boolean,
  io: Io,
): Promise<number> {
  const deps = stateDeps(location, io.env);
  let nodes: string[];
  try {
    await deps.stores.open();
    nodes = node === undefined ? await deps.stores.listNodes() : [node];
  } catch (error) {
    return readingFailed(error, io, { json });
  }
  let exit: number = EXIT.done;
  const results: Record<string, RekeyNode> = {};
  try {
    for (const each of nodes) {
      const outcome = await runOne(REKEY, { node: each, module: '', yes: false }, deps, io);
      const { said, refused, code } = outcome;
      results[each] =
        refused === undefined
          ? { outcome: 'done', said }
          : { outcome: 'refused', said, refused, code: code ?? 'failed' };
      if (!json) {
        if (outcome.said) io.out(outcome.said);
        if (outcome.refused) io.err(outcome.refused);
      }
      exit = Math.max(exit, outcome.exit);
    }
  } finally {
    await deps.stores.close();
  }
  if (json) io.out(JSON.stringify(rekeyAnswer(results)));
  else if (nodes.length === 0) io.out('no node has records: nothing to seal again');
  return exit;
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
    const outcome = await runOne(command, { node, module, yes: false }, deps, io);
    if (outcome.refused !== undefined) {
      if (json) io.out(JSON.stringify(enveloped({ refused: outcome.refused, code: outcome.code })));
      else io.err(outcome.refused);
      return outcome.exit;
    }
    const text = secretText(value ?? new Uint8Array());
    io.out(json ? JSON.stringify(enveloped({ value: text })) : text);
    return EXIT.done;
  } finally {
    await deps.stores.close();
  }
}

/** A node's part of `rekey --json`: what it said, and its refusal with its code. */
type RekeyNode =
  | { outcome: 'done'; said: string }
  | { outcome: 'refused'; said: string; refused: string; code: Code };

/** `rekey --json`: the one envelope, each node by name, the refusals named by node as a target's. */
function rekeyAnswer(nodes: Record<string, RekeyNode>) {
  const refusals = Object.entries(nodes).flatMap(([node, part]) =>
    part.outcome === 'refused' ? [{ node, ...part }] : [],
  );
  const codes = new Set(refusals.map((part) => part.code));
  return enveloped({
    said: Object.values(nodes)
      .map((part) => part.said)
      .filter((said) => said !== '')
      .join('\n'),
    ...(refusals.length === 0
      ? {}
      : {
          refused: refusals.map((part) => `${part.node}: ${part.refused}`).join('\n'),
          code: codes.size === 1 ? [...codes][0] : 'nodes_refused',
        }),
    nodes,
  });
}

async function runOne(
  command: CommandShape,
  request: CommandRequest,
  deps: ReturnType<typeof stateDeps>,
  io: Io,
): Promise<{ said: string; refused?: string; code?: Code; exit: number }> {
  const opened = await openAct(command, request, deps, { actor: osUser(io), via: 'cli', mint: [] });
  if (opened.kind !== 'ready') {
    const exit = opened.kind === 'missing' ? EXIT.usage : EXIT.stores;
    return { said: '', refused: opened.refused, code: opened.code, exit };
  }
  const outcome = await opened.run();
  const exit = outcome.storeFailed
    ? EXIT.stores
    : outcome.error === undefined
      ? EXIT.done
      : EXIT.refused;
  if (outcome.error === undefined) return { said: saidOf(outcome), exit };
  return { said: saidOf(outcome), refused: outcome.error, code: codeOf(outcome), exit };
}
