import type { Refused, RefusedReading } from '../commands/reading-answer.ts';
import type { AnswerName, AnswerOf } from '../commands/table.ts';
import { entryOf } from '../commands/table.ts';
import { FORMAT_VERSION } from '../model/result.ts';
import { refusalWords } from '../words/refusals.ts';
import type { AnswerWords } from './answer-words.ts';
import { osUser, stateDeps } from './deps.ts';
import { exitOfAnswer } from './io.ts';
import { sayingWhenWaiting } from './lock-wait.ts';
import type { Given } from './program.ts';
import { statusWords } from './reading.ts';

/**
 * The words of each command that answers a typed value, loaded at its first use; the type
 * checker holds the list complete against the command table.
 */
const ANSWER_WORDS: { [N in AnswerName]: () => Promise<AnswerWords<Shown<AnswerOf<N>>>> } = {
  // `berth status` is the reading run most: its words come with this file.
  status: async () => statusWords,
  log: async () => (await import('./log.ts')).logWords,
  rekey: async () => (await import('./vault-commands.ts')).rekeyWords,
  secret: async () => (await import('./vault-commands.ts')).secretWords,
  ca: async () => (await import('./ca.ts')).caWords,
  nodes: async () => (await import('./inventory.ts')).nodesWords,
  modules: async () => (await import('./modules.ts')).modulesWords,
  openapi: async () => (await import('./openapi.ts')).openApiWords,
};

type Answered = { refused?: string; said?: string; code?: Parameters<typeof exitOfAnswer>[0] };

/** A reading as the command line shows it: a refusal in its words, in the one envelope. */
type Shown<A> = Exclude<A, RefusedReading> | Refused;

function shown<A extends object>(answer: A | RefusedReading): Shown<A> {
  if (!('refusal' in answer)) return answer as Exclude<A, RefusedReading>;
  const { refusal } = answer;
  return { format_version: FORMAT_VERSION, refused: refusalWords(refusal), code: refusal.code };
}

/**
 * A command that answers a typed value, on the command line: the answer made over this
 * machine's state, then shown — as JSON with `--json`, else in words (a refusal alone on
 * standard error) — and the exit chosen from its code.
 */
export async function runAnswer<N extends AnswerName>(name: N, given: Given): Promise<number> {
  const entry = entryOf(name);
  if (!entry || typeof entry.runs !== 'object' || !('answer' in entry.runs))
    throw new Error(`${name} answers no typed value`);
  const { io, options } = given;
  // Its words are loaded while the answer is made.
  const loading = ANSWER_WORDS[name]();
  const deps = stateDeps(given.location(), io.env, { lockWaitMs: options.lockTimeout });
  const asked = { words: given.words, options };
  const answer = shown(
    (await entry.runs.answer(asked, {
      ...deps,
      // A wait for a node's lock is said, as an act's is.
      stores: sayingWhenWaiting(deps.stores, (line) => io.err(line)),
      actor: osUser(io),
    })) as AnswerOf<N> & object,
  ) as Shown<AnswerOf<N>> & Answered;
  const words = await loading;
  if (options.json) {
    const json = words.json ? words.json(answer) : JSON.stringify(answer);
    if (json !== undefined) io.out(json);
  } else if (answer.refused !== undefined && answer.said === undefined) io.err(answer.refused);
  else await words.words(answer, asked, io);
  return exitOfAnswer(answer.code);
}
