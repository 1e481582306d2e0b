import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { GLOBAL_OPTIONS, OPTIONS } from '../commands/options.ts';
import { type Entry, optionNames, TABLE, type WordKind } from '../commands/table.ts';
import { locateState } from '../config/state-dir.ts';
import { isName } from '../model/names.ts';
import { ownValue } from '../utils/own-record.ts';
import { EXIT, type Io } from './io.ts';
import { SHELLS } from './shells.ts';

interface Words {
  args: readonly WordKind[];
  flags: readonly string[];
}

/**
 * The command line as completion sees it: each command's words and flags, from the
 * command table, without cac itself, so that a Tab costs a start without the option parser.
 */
export const SURFACE: Record<string, Words> = Object.fromEntries(
  (TABLE as readonly Entry[]).map((entry) => [
    entry.name,
    {
      args: entry.words.map((word) => word.stands),
      flags: optionNames(entry).map((name) => OPTIONS[name].flag),
    },
  ]),
);

export const GLOBAL_FLAGS = [
  ...GLOBAL_OPTIONS.map((name) => OPTIONS[name].flag),
  '--help',
  '--version',
];

/** Flags followed by a value: the word after one is its value, not a command's word. */
const TAKES_VALUE = new Set<string>(
  Object.values(OPTIONS).flatMap((option) => ('value' in option ? [option.flag] : [])),
);

/**
 * `berth __complete WORD… CURRENT`: the candidates for the word being typed (CURRENT,
 * empty for a new word), given the words before it, one a line. Never fails: a berth.json
 * that cannot be read gives no names, and a Tab is not the place to say why.
 */
export function printCandidates(words: readonly string[], io: Io): number {
  const joined = joinedAtAnd(words);
  const before = joined.slice(0, -1);
  const current = joined.at(-1) ?? '';
  const found = candidates(before, current, io.env).filter((word) => word.startsWith(current));
  if (found.length > 0) io.out(found.join('\n'));
  return EXIT.done;
}

function candidates(
  before: readonly string[],
  current: string,
  env: Record<string, string | undefined>,
): string[] {
  let command: string | undefined;
  let state: string | undefined;
  const positional: string[] = [];
  for (let index = 0; index < before.length; index++) {
    const word = before[index] as string;
    if (word.startsWith('--')) {
      const [flag, inline] = word.split('=', 2) as [string, string | undefined];
      if (TAKES_VALUE.has(flag) && inline === undefined) {
        if (flag === '--state') state = before[index + 1];
        index++;
      } else if (flag === '--state') state = inline;
    } else if (command === undefined) command = word;
    else positional.push(word);
  }
  const previous = before.at(-1);
  if (previous === '--filter') return names('module', state, env);
  if (previous === '--out') return files(current);
  if (previous !== undefined && TAKES_VALUE.has(previous)) return [];
  const words = command === undefined ? undefined : ownValue(SURFACE, command);
  if (current.startsWith('-')) return [...(words?.flags ?? []), ...GLOBAL_FLAGS];
  if (command === undefined) return Object.keys(SURFACE);
  const kind = words?.args[positional.length];
  if (kind === 'file') return files(current);
  if (kind === 'target') {
    // A part after `,`, `&` or `!` completes as a target of its own, after what is typed.
    const typed = current.slice(
      0,
      Math.max(...[',', '&', '!'].map((mark) => current.lastIndexOf(mark))) + 1,
    );
    return names(kind, state, env).map((name) => `${typed}${name}`);
  }
  return kind === undefined ? [] : names(kind, state, env);
}

/**
 * The words as berth reads them: bash splits a word at `&` for completion (it is in its
 * COMP_WORDBREAKS), so `@web&@e` comes as three, which are one target.
 */
function joinedAtAnd(words: readonly string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < words.length; index++) {
    const word = words[index] as string;
    if (word === '&' && joined.length > 0) joined.push(`${joined.pop()}&${words[++index] ?? ''}`);
    else joined.push(word);
  }
  return joined;
}

/**
 * The files and directories (with a `/`) where the word being typed points, as each
 * shell's own file completion would offer them: a plan file for `act` or `--out`.
 */
function files(current: string): string[] {
  const cut = current.lastIndexOf('/') + 1;
  const dir = current.slice(0, cut);
  try {
    return readdirSync(dir === '' ? '.' : dir, { withFileTypes: true })
      .filter((entry) => !entry.name.startsWith('.') || current.slice(cut).startsWith('.'))
      .map((entry) => `${dir}${entry.name}${entry.isDirectory() ? '/' : ''}`)
      .sort();
  } catch {
    return [];
  }
}

function names(
  kind: Exclude<WordKind, 'file'>,
  stateFlag: string | undefined,
  env: Record<string, string | undefined>,
): string[] {
  // A secret's name is the vault's, which a Tab does not open.
  if (kind === 'secret') return [];
  if (kind === 'shell') return SHELLS;
  if (kind === 'command') return Object.keys(SURFACE);
  const dir = locateState(stateFlag, env).dir;
  const settings = readSettings(dir);
  if (kind === 'module') {
    const catalog = typeof settings.catalog === 'string' ? settings.catalog : 'modules';
    try {
      return readdirSync(resolve(dir, catalog))
        .filter((file) => file.endsWith('.json'))
        .map((file) => file.slice(0, -'.json'.length))
        .filter(isName)
        .sort();
    } catch {
      return [];
    }
  }
  const nodes = objectKeys(settings.nodes, ['local']).filter(isName).sort();
  if (kind === 'node') return nodes;
  // A target: a node, or a group as `@name` (berth.json's groups, and @all).
  const groups = objectKeys(settings.groups, []).filter(isName).sort();
  return [...nodes, ...groups.map((group) => `@${group}`), '@all'];
}

/** berth.json as JSON, unchecked: completion offers what it names, an act checks it. */
function readSettings(dir: string): Record<string, unknown> {
  try {
    const json = JSON.parse(readFileSync(resolve(dir, 'berth.json'), 'utf8'));
    return json && typeof json === 'object' && !Array.isArray(json) ? json : {};
  } catch {
    return {};
  }
}

function objectKeys(value: unknown, otherwise: string[]): string[] {
  if (value === undefined) return otherwise;
  return value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
}
