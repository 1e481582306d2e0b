import * as v from 'valibot';
import { parseDuration } from '../utils/duration.ts';

/**
 * Every option of the command line, once: its flag, the name of its value (none for a
 * flag), its help, its default, whether it is a field of the request both faces have
 * (`both`) or the command line's alone (`line`), and the valibot schema that reads what
 * the option parser (cac, through mri) made of it. cac's name of an option is its key
 * here (`--full-diff` is `fullDiff`). The table of commands (table.ts) names each
 * command's options from this one; the command line, its help, completion and a
 * command's context are all made from it.
 *
 * mri reads a word that looks like a number as one (`0123` as 123, `1e3` as 1000, a blank
 * word as 0) and cac asks it to keep none as text; what was typed cannot be had back. So a
 * value that reached berth as a number where text is wanted is refused in words (exit 2),
 * never turned back into text it may not have been (docs/cli.md, "Words and numbers").
 */

/** The words of `berth api` without an issuer (fixed by the Command API's specification). */
export const NO_ISSUER =
  'berth api will not run without being told whose tokens to believe: give --issuer, the URL of the OAuth 2.0 issuer';

/** What one option is, as its entry says it. */
interface OptionSpec<TSchema extends v.GenericSchema> {
  flag: `--${string}`;
  /** The name of its value in help (`--to <url>`); none for a flag. */
  value?: string;
  help: string;
  /** What it is when not given, as help shows it and cac fills it in. */
  default?: string;
  /** A field of the request both faces have (`both`), or the command line's alone. */
  face: 'both' | 'line';
  /** Given more than once, each value counts (`--mint a --mint b`). */
  repeatable?: true;
  schema: TSchema;
}

/** What cac gives for an option: mri's value, or a list of them when it was given again. */
const lastOf = (value: unknown) => (Array.isArray(value) ? value.at(-1) : value);

/** The words for a value mri read as something other than text, or undefined for text. */
function notText(flag: string, takes: string, value: unknown): string | undefined {
  if (typeof value === 'string') return undefined;
  if (typeof value === 'number')
    return `${flag} takes ${takes}; the option parser read its value as the number ${value}, as it reads 007, 1e3, 0x10 or a blank word`;
  return `${flag} needs a value`;
}

/** A flag: on when given (`--no-yes` turns it off again). */
const flag = () =>
  v.pipe(
    v.unknown(),
    v.transform((value) => lastOf(value) === true),
  );

/** Text, the last given if given again; `refusal` replaces the words for anything else. */
function text(flagName: `--${string}`, takes: string, refusal?: string) {
  return v.pipe(
    v.unknown(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const value = lastOf(dataset.value);
      const wrong = notText(flagName, takes, value);
      if (wrong === undefined) return value as string;
      addIssue({ message: refusal ?? wrong });
      return NEVER;
    }),
  );
}

/** Text each time it is given, in order. */
function texts(flagName: `--${string}`, takes: string) {
  return v.pipe(
    v.unknown(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const values = [dataset.value].flat();
      for (const value of values) {
        const wrong = notText(flagName, takes, value);
        if (wrong === undefined) continue;
        addIssue({ message: wrong });
        return NEVER;
      }
      return values as string[];
    }),
  );
}

/** A whole number from 1: mri reads `5` as a number, which is what a count is. */
function count(flagName: `--${string}`, takes: string) {
  return v.pipe(
    v.unknown(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const value = lastOf(dataset.value);
      if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
      addIssue({
        message:
          value === true || value === false
            ? `${flagName} needs a value`
            : // A number mri read is said as the text it reads as (`0`, `1.5`).
              `${flagName} takes ${takes}, not ${JSON.stringify(String(value))}`,
      });
      return NEVER;
    }),
  );
}

/** A duration in words (`10s`), read by `parse` into what the code that reads it uses. */
function duration<T>(flagName: `--${string}`, takes: string, parse: (typed: string) => T) {
  return v.pipe(
    v.unknown(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const value = lastOf(dataset.value);
      const wrong = notText(flagName, takes, value);
      const parsed = wrong === undefined ? parse(value as string) : undefined;
      if (parsed !== undefined) return parsed;
      addIssue({ message: wrong ?? `${flagName} takes ${takes}, not ${JSON.stringify(value)}` });
      return NEVER;
    }),
  );
}

const MS = /^(\d{1,7})ms$/;
const DAYS = /^(\d{1,5})d$/;

export const OPTIONS = {
  state: {
    flag: '--state',
    value: 'dir',
    help: 'The state directory (default: $BERTH_STATE, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)',
    face: 'line',
    schema: text('--state', 'a directory'),
  },
  json: {
    flag: '--json',
    help: 'Print what the API would answer, as JSON',
    face: 'line',
    schema: flag(),
  },
  lockTimeout: {
    flag: '--lock-timeout',
    value: 'duration',
    help: "How long to wait for a node's lock before giving up: 500ms, 10s, 2m (default: 10s)",
    face: 'line',
    // In milliseconds: `500ms`, or a duration as berth.json writes one (`10s`, `2m`).
    schema: duration('--lock-timeout', 'a duration, like 500ms, 10s or 2m', (typed) => {
      const ms = MS.exec(typed);
      return ms ? Number(ms[1]) : parseDuration(typed);
    }),
  },
  yes: {
    flag: '--yes',
    help: 'Act, rather than preview (at a terminal without --digest: preview, then ask)',
    face: 'both',
    schema: flag(),
  },
  digest: {
    flag: '--digest',
    value: 'digest',
    help: 'The digest of the preview to act on',
    face: 'both',
    schema: text('--digest', 'the digest a preview printed'),
  },
  filter: {
    flag: '--filter',
    value: 'module',
    help: 'Converge this module alone',
    face: 'both',
    schema: text('--filter', "a module's name"),
  },
  mint: {
    flag: '--mint',
    value: 'secret',
    help: 'Let a take mint this secret over found data (repeatable)',
    face: 'line',
    repeatable: true,
    schema: texts('--mint', "a secret's name"),
  },
  rotate: {
    flag: '--rotate',
    value: 'secret',
    help: 'Rotate this key secret: the preview mints the new key and names its kid (repeatable)',
    face: 'line',
    repeatable: true,
    schema: texts('--rotate', "a key secret's name"),
  },
  parallel: {
    flag: '--parallel',
    value: 'n',
    help: "A target's act: at most n nodes at once (default 10)",
    face: 'both',
    schema: count('--parallel', 'a whole number from 1'),
  },
  batch: {
    flag: '--batch',
    value: 'n',
    help: "A target's act: n nodes at a time, beginning no further batch after one where a node failed",
    face: 'both',
    schema: count('--batch', 'a whole number from 1'),
  },
  detailedExitcode: {
    flag: '--detailed-exitcode',
    help: 'On a preview, exit 0 when there is nothing to do, 2 when there is and nothing blocks it, 1 when a blocker stands',
    face: 'line',
    schema: flag(),
  },
  fullDiff: {
    flag: '--full-diff',
    help: "Show each file's whole diff in a preview, not its first 40 lines",
    face: 'line',
    schema: flag(),
  },
  out: {
    flag: '--out',
    value: 'file',
    help: 'Write the preview to a plan file, to review and then act on with berth act',
    face: 'line',
    schema: text('--out', 'a file'),
  },
  refresh: {
    flag: '--refresh',
    help: "Before the preview, fetch the node's package lists anew (apt-get update): an act of its own, journaled",
    face: 'line',
    schema: flag(),
  },
  check: {
    flag: '--check',
    help: 'Run the check of each module berth manages on the node, and show it',
    face: 'line',
    schema: flag(),
  },
  since: {
    flag: '--since',
    value: 'duration',
    help: 'The acts of the last 90s, 15m, 2h or 7d alone',
    face: 'line',
    schema: duration('--since', 'a duration, like 90s, 15m, 2h or 7d', (typed) => {
      const days = DAYS.exec(typed);
      const ms = days ? Number(days[1]) * 86_400_000 : parseDuration(typed);
      return ms === undefined ? undefined : { ms, typed };
    }),
  },
  tail: {
    flag: '--tail',
    value: 'n',
    help: 'The last n acts alone',
    face: 'line',
    schema: count('--tail', 'a whole number of acts from 1'),
  },
  listen: {
    flag: '--listen',
    value: 'address',
    help: 'host:port to listen on',
    face: 'line',
    schema: text('--listen', 'host:port, like 127.0.0.1:8081 or [::1]:8081'),
  },
  issuer: {
    flag: '--issuer',
    value: 'url',
    help: 'The OAuth 2.0 issuer whose tokens are accepted (required): its URL, or MODULE@NODE for the issuer a module provides there',
    face: 'line',
    // Empty or blank (which mri reads as 0), or without its value: the specification's words.
    schema: text('--issuer', 'a URL', NO_ISSUER),
  },
  audience: {
    flag: '--audience',
    value: 'audience',
    help: 'The audience a token must carry',
    default: 'berth',
    face: 'line',
    // Empty or blank, which mri reads as 0: a token is always for something.
    schema: text(
      '--audience',
      'a name',
      '--audience names what a token must be for; it cannot be empty, nor a number (leave it out for berth)',
    ),
  },
  issuerCa: {
    flag: '--issuer-ca',
    value: 'file',
    help: "A CA certificate (PEM) to trust for the issuer, besides the system's and the state's CA (repeatable)",
    face: 'line',
    repeatable: true,
    schema: texts('--issuer-ca', 'a file'),
  },
  to: {
    flag: '--to',
    value: 'url',
    help: 'The store: postgresql://USER@HOST[:PORT]/DATABASE (no password)',
    face: 'line',
    schema: text('--to', 'a PostgreSQL URL'),
  },
} as const satisfies Record<string, OptionSpec<v.GenericSchema>>;

export type OptionName = keyof typeof OPTIONS;

/** The options every command takes, before its own. */
export const GLOBAL_OPTIONS = ['state', 'json', 'lockTimeout'] as const satisfies OptionName[];

type Schemas = { [K in OptionName]: v.OptionalSchema<(typeof OPTIONS)[K]['schema'], undefined> };

/** What cac parsed, read: each option given, typed; the others absent. */
export const LineOptionsSchema = v.object(
  Object.fromEntries(
    Object.entries(OPTIONS).map(([name, option]) => [name, v.optional(option.schema)]),
  ) as Schemas,
);

/** The command line's options as one typed value. */
export type LineOptions = v.InferOutput<typeof LineOptionsSchema>;

/**
 * The command line's options as a command's context carries them: all but `--full-diff`,
 * which chooses how much of each diff the words show, not what a command does. The
 * command line keeps it, to render what a command returned (src/words/said.ts).
 */
export type CommandOptions = Omit<LineOptions, 'fullDiff'>;
