import * as v from 'valibot';
import { isName } from './names.ts';
import { describeIssues } from './schema-issues.ts';
import { jsonRecord, strictJsonObject } from './strict-json.ts';

/** A machine path: absolute and normalised, so it cannot climb out of a root. */
const MachinePath = v.pipe(
  v.string(),
  v.check(
    (path) =>
      path.startsWith('/') &&
      path.length > 1 &&
      !path.endsWith('/') &&
      !path.includes('\0') &&
      path
        .slice(1)
        .split('/')
        .every((part) => part !== '' && part !== '.' && part !== '..'),
    'a machine path must be absolute and normalised (no "..", ".", "//" or trailing "/")',
  ),
);

const SecretName = v.pipe(
  v.string(),
  v.regex(/^[a-z][a-z0-9_]{0,62}$/, 'a secret name is a-z, 0-9 and _, starting with a letter'),
);

const ModuleName = v.pipe(
  v.string(),
  v.check(isName, 'a module name is 1 to 63 characters of a-z, 0-9 and -'),
);

const SECRET_BYTES = 'a whole number from 8 to 512';

const ACCOUNT = 'an owner or group is a name on the machine (like "www-data") or a number';

/** A user or group: a name resolved on the machine, or a number (a string of digits is one). */
const Account = v.pipe(
  v.union(
    [
      v.pipe(v.number(), v.integer(ACCOUNT), v.minValue(0, ACCOUNT)),
      v.pipe(v.string(), v.regex(/^(?:[0-9]+|[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?)$/, ACCOUNT)),
    ],
    ACCOUNT,
  ),
  v.transform((account) =>
    typeof account === 'string' && /^[0-9]+$/.test(account) ? Number(account) : account,
  ),
);

const Mode = v.pipe(v.string(), v.regex(/^0?[0-7]{3}$/, 'a mode is octal, like "0640"'));

/** Who owns a file, secret or data directory, and its mode: what is not named is kept. */
const ownership = {
  owner: v.optional(Account),
  group: v.optional(Account),
  mode: v.optional(Mode),
};

/**
 * Every object of a definition is strict: a field berth does not know is refused, never
 * dropped (a `mdoe` dropped would leave the file at the default mode).
 */
const SecretSpec = strictJsonObject({
  path: MachinePath,
  ...ownership,
  bytes: v.optional(
    v.pipe(
      v.number(),
      v.integer(SECRET_BYTES),
      v.minValue(8, SECRET_BYTES),
      v.maxValue(512, SECRET_BYTES),
    ),
    32,
  ),
});

const FileSpec = strictJsonObject({
  ...ownership,
  content: v.string(),
});

/**
 * A data path, alone or with its owner, group and mode; always an object once parsed. A
 * path alone is made the object first, so a wrong field gets the strict object's words.
 */
const DataSpec = v.pipe(
  v.unknown(),
  v.transform((data) => (typeof data === 'string' ? { path: data } : data)),
  strictJsonObject({ path: MachinePath, ...ownership }),
);

export const ModuleDefinitionSchema = v.pipe(
  strictJsonObject({
    description: v.optional(v.string(), ''),
    needs: v.optional(v.array(ModuleName), []),
    data: v.optional(v.array(DataSpec), []),
    secrets: v.optional(jsonRecord(SecretName, SecretSpec), {}),
    files: v.optional(jsonRecord(MachinePath, FileSpec), {}),
    start: v.optional(v.string()),
    stop: v.optional(v.string()),
  }),
  v.check((definition) => {
    const used = Object.values(definition.files).flatMap((file) =>
      [...file.content.matchAll(SECRET_PLACEHOLDER)].map((match) => match[1] as string),
    );
    return used.every((name) => name in definition.secrets);
  }, 'a file names a secret, with {{secret NAME}}, that the module does not declare'),
);

export type ModuleDefinition = v.InferOutput<typeof ModuleDefinitionSchema>;

/** Owner, group and mode as a definition names them (any of them may be left out). */
export type Ownership = { owner?: string | number; group?: string | number; mode?: string };

/** Every user and group name a definition names, to be resolved on the machine. */
export function accountNames(definition: ModuleDefinition): { users: string[]; groups: string[] } {
  const all: Ownership[] = [
    ...definition.data,
    ...Object.values(definition.secrets),
    ...Object.values(definition.files),
  ];
  const names = (pick: (item: Ownership) => string | number | undefined) => [
    ...new Set(all.map(pick).filter((name): name is string => typeof name === 'string')),
  ];
  return { users: names((item) => item.owner), groups: names((item) => item.group) };
}

export const SECRET_PLACEHOLDER = /\{\{secret ([a-z][a-z0-9_]*)\}\}/g;

/** A catalog entry as the stores found it: a definition, or why there is none. */
export type CatalogEntry =
  | { name: string; definition: ModuleDefinition }
  | { name: string; problem: string; missing?: true };

/** Where module definitions come from. The file store reads `<catalog>/<name>.json`. */
export interface Catalog {
  /** Every module name the catalog holds, sorted. */
  names(): Promise<string[]>;
  /** One module; `problem` says why it cannot be used (missing, not JSON, not valid). */
  entry(name: string): Promise<CatalogEntry>;
}

/** Checks a definition read as JSON text, with the words a user needs to mend it. */
export function parseDefinition(name: string, where: string, text: string): CatalogEntry {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { name, problem: `${where} is not valid JSON: ${(error as Error).message}` };
  }
  const result = v.safeParse(ModuleDefinitionSchema, json);
  if (result.success) return { name, definition: result.output };
  return {
    name,
    problem: `${where} is not valid: ${describeIssues(result.issues, ModuleDefinitionSchema)}`,
  };
}

/** Puts the module's secrets into its file contents. */
export function renderFile(content: string, secrets: Record<string, string>): string {
  return content.replace(SECRET_PLACEHOLDER, (_, name: string) => secrets[name] ?? '');
}
