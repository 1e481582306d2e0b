import * as v from 'valibot';
import { certificateName } from '../keys/certificate-names.ts';
import { isKeySecretKind, KEY_SECRET_KINDS, SECRET_KINDS, TLS_DAYS_MOST } from '../keys/kinds.ts';
import { PackagesField, RefreshAfter } from '../packages/packages-field.ts';
import { didYouMean } from '../utils/did-you-mean.ts';
import { parseDuration } from '../utils/duration.ts';
import { ownValue } from '../utils/own-record.ts';
import { describeIssues } from '../utils/schema-issues.ts';
import { jsonRecord, strictJsonObject } from '../utils/strict-json.ts';
import { FACT_NAMES, isFactName, MACHINE_FACTS } from './facts.ts';
import { isName } from './names.ts';
import { keysRead, PLACEHOLDER_TEST, type Reads, readsOf } from './template.ts';
import { ValueNameSchema, ValueSpecSchema } from './values.ts';

const MACHINE_PATH =
  'a machine path must be absolute and normalised (no "..", ".", "//" or trailing "/")';

/** A machine path: absolute and normalised, so it cannot climb out of a root. */
const MachinePath = v.pipe(v.string(), v.check(isMachinePath, MACHINE_PATH));

function isMachinePath(path: string): boolean {
  return (
    path.startsWith('/') &&
    path.length > 1 &&
    !path.endsWith('/') &&
    !path.includes('\0') &&
    path
      .slice(1)
      .split('/')
      .every((part) => part !== '' && part !== '.' && part !== '..')
  );
}

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

const MATCH = 'match is a regular expression with exactly one capture group (the secret)';

/** The number of capture groups of a regular expression, or undefined when it is none. */
function captureGroups(source: string): number | undefined {
  try {
    return (new RegExp(`${source}|`).exec('')?.length ?? 1) - 1;
  } catch {
    return undefined;
  }
}

const SECRET_KIND = `a secret's kind is ${SECRET_KINDS.join(', ')}`;

/** A secret's kind: `random` unless named (a definition that names none digests as it did). */
const SecretKindSchema = v.pipe(
  v.string(),
  v.check(
    (kind) => (SECRET_KINDS as readonly string[]).includes(kind),
    (issue) =>
      `${JSON.stringify(issue.input)} is not a kind of secret berth keeps: ${SECRET_KIND}${didYouMean(String(issue.input), SECRET_KINDS)}`,
  ),
);

/** "an ec-p256 key", "a tls secret's key": a key kind in words. */
function keyWords(kind: string | undefined): string {
  return kind === 'tls' ? "a tls secret's key" : `an ${kind} key`;
}

/**
 * A name a `tls` secret's certificate is for: a DNS name or an address, or a template that
 * renders to one on the node (`{{fact fqdn}}`), checked then.
 */
const CertificateNameTemplate = v.pipe(
  v.string(),
  v.check(
    (text) => {
      if (PLACEHOLDER_TEST.test(text)) return true;
      return !('refused' in certificateName(text));
    },
    (issue) => {
      const name = certificateName(String(issue.input));
      return 'refused' in name ? name.refused : 'not a name';
    },
  ),
);

const TLS_DAYS_WORDS = `days is a whole number from 1 to ${TLS_DAYS_MOST}`;

/**
 * Every object of a definition is strict: a field berth does not know is refused, never
 * dropped (a `mdoe` dropped would leave the file at the default mode). A secret is a file
 * of its own (`path`) or lives inside a file of the module (`in` and `match`); once
 * parsed, `path` is where it is either way, and `match` says it is inside. A secret of a
 * key kind is a PEM private key at `path`; a `tls` secret's certificate is at `cert`.
 */
const SecretSpec = v.pipe(
  strictJsonObject({
    kind: v.optional(SecretKindSchema),
    path: v.optional(MachinePath),
    in: v.optional(MachinePath),
    match: v.optional(
      v.pipe(
        v.string(),
        v.check((match) => captureGroups(match) === 1, MATCH),
      ),
    ),
    ...ownership,
    bytes: v.optional(
      v.pipe(
        v.number(),
        v.integer(SECRET_BYTES),
        v.minValue(8, SECRET_BYTES),
        v.maxValue(512, SECRET_BYTES),
      ),
    ),
    cert: v.optional(MachinePath),
    names: v.optional(
      v.pipe(
        v.array(CertificateNameTemplate),
        v.minLength(1, 'names lists at least one DNS name or address the certificate is for'),
      ),
    ),
    days: v.optional(
      v.pipe(
        v.number(),
        v.integer(TLS_DAYS_WORDS),
        v.minValue(1, TLS_DAYS_WORDS),
        v.maxValue(TLS_DAYS_MOST, TLS_DAYS_WORDS),
      ),
    ),
  }),
  v.check(
    (secret) => (secret.path === undefined) !== (secret.in === undefined),
    'a secret has either path (a file of its own) or in and match (inside a file), not both nor neither',
  ),
  v.check(
    (secret) => (secret.in === undefined) === (secret.match === undefined),
    'a secret inside a file names both in (the file) and match (where in it)',
  ),
  v.check(
    (secret) =>
      secret.in === undefined ||
      (secret.owner === undefined && secret.group === undefined && secret.mode === undefined),
    'a secret inside a file has the owner, group and mode of that file: name them on the file',
  ),
  v.check(
    (secret) => secret.in === undefined || !isKeySecretKind(secret.kind),
    'a key is a PEM file of its own: name its path, not in and match',
  ),
  v.check(
    (secret) => secret.bytes === undefined || !isKeySecretKind(secret.kind),
    (issue) =>
      `bytes is how much randomness a random secret has; ${keyWords((issue.input as { kind?: string }).kind)} is of its own size`,
  ),
  v.check(
    (secret) =>
      secret.kind === 'tls' ||
      (secret.cert === undefined && secret.names === undefined && secret.days === undefined),
    'cert, names and days are those of a tls secret (a key and its certificate): name "kind": "tls"',
  ),
  v.check(
    (secret) => secret.kind !== 'tls' || (secret.cert !== undefined && secret.names !== undefined),
    'a tls secret names its cert (where its certificate is written) and names (what it is for, like ["{{fact host}}"])',
  ),
  v.check(
    (secret) => secret.cert === undefined || secret.cert !== secret.path,
    "a tls secret's cert is a file apart from its key's path",
  ),
  v.transform(({ in: inside, path, bytes, ...rest }) => ({
    ...rest,
    path: (path ?? inside) as string,
    bytes: bytes ?? 32,
  })),
);

/** A file's text: `content` itself, or `source`, a template under the catalog directory. */
const FileSpec = v.pipe(
  strictJsonObject({
    ...ownership,
    content: v.optional(v.string()),
    source: v.optional(
      v.pipe(
        v.string(),
        v.check(
          (source) =>
            source.length > 0 &&
            !source.startsWith('/') &&
            !source.includes('\0') &&
            source.split('/').every((part) => part !== '' && part !== '.' && part !== '..'),
          'a source is a path under the catalog directory, like "gitea/app.ini"',
        ),
      ),
    ),
  }),
  v.check(
    (file) => (file.content === undefined) !== (file.source === undefined),
    'a file has either content or source (a template under the catalog directory), exactly one',
  ),
);

/**
 * A data path, alone or with its owner, group and mode; always an object once parsed. A
 * path alone is made the object first, so a wrong field gets the strict object's words.
 */
const DataSpec = v.pipe(
  v.unknown(),
  v.check((data) => typeof data !== 'string' || isMachinePath(data), MACHINE_PATH),
  v.transform((data) => (typeof data === 'string' ? { path: data } : data)),
  strictJsonObject({ path: MachinePath, ...ownership }),
);

const TIMEOUT = 'a timeout is a duration from 1s to 24h, like "90s", "5m" or "1h"';
const LONGEST_TIMEOUT_MS = 24 * 3_600_000;

/**
 * How long each hook and the check may run (`90s`), in milliseconds once parsed; left out,
 * HOOK_DEADLINE_MS (machine.ts). A definition without it digests as it always did.
 */
const HookTimeout = v.pipe(
  v.string(TIMEOUT),
  v.check((text) => {
    const ms = parseDuration(text);
    return ms !== undefined && ms >= 1_000 && ms <= LONGEST_TIMEOUT_MS;
  }, TIMEOUT),
  v.transform((text) => parseDuration(text) as number),
);

export const ModuleDefinitionSchema = strictJsonObject({
  description: v.optional(v.string(), ''),
  needs: v.optional(v.array(ModuleName), []),
  packages: v.optional(PackagesField, []),
  refresh_after: v.optional(RefreshAfter),
  data: v.optional(v.array(DataSpec), []),
  secrets: v.optional(jsonRecord(SecretName, SecretSpec), {}),
  /** The values its templates read, and its hooks see: each with its type, default and what it is. */
  values: v.optional(jsonRecord(ValueNameSchema, ValueSpecSchema), {}),
  files: v.optional(jsonRecord(MachinePath, FileSpec), {}),
  /** What a service needs once its files are in place, before its start or reload: idempotent. */
  setup: v.optional(v.string()),
  start: v.optional(v.string()),
  stop: v.optional(v.string()),
  reload: v.optional(v.string()),
  check: v.optional(v.string()),
  timeout: v.optional(HookTimeout),
  /** What the module provides to berth itself: an issuer `berth api --issuer MODULE@NODE` trusts. */
  provides: v.optional(
    strictJsonObject({
      issuer: v.optional(
        v.pipe(
          v.string(),
          v.regex(
            /^https?:\/\/./,
            'provides.issuer is the URL of an OAuth 2.0 issuer, like "https://{{fact fqdn}}:4593/api/oidc"',
          ),
        ),
      ),
    }),
  ),
});

type ParsedDefinition = v.InferOutput<typeof ModuleDefinitionSchema>;

/** A definition as berth uses it: every file's text at hand (a source read in). */
export type ModuleDefinition = Omit<ParsedDefinition, 'files'> & {
  files: Record<string, ParsedDefinition['files'][string] & { content: string }>;
};

/** One secret of a definition, as parsed: its kind (random unless named), where it is, and for whom. */
export type SecretDefinition = ModuleDefinition['secrets'][string];

/** What a definition says across its fields, once its files' texts are known: words, or none. */
function crossCheck(definition: ModuleDefinition): string | undefined {
  const secrets = Object.keys(definition.secrets);
  const kindOf = (name: string) => ownValue(definition.secrets, name)?.kind ?? 'random';
  for (const [path, file] of Object.entries(definition.files)) {
    const reads = readsOf(file.content);
    for (const name of [...reads.secret, ...keysRead(reads)])
      if (!Object.hasOwn(definition.secrets, name))
        return `${path} names a secret, ${placeholderOf(reads, name)}, that the module does not declare${didYouMean(name, secrets)}`;
    for (const name of [...reads.public, ...reads.jwk])
      if (!isKeySecretKind(kindOf(name)))
        return `${path} reads ${placeholderOf(reads, name)}, but ${name} is a random secret: a public key is a key secret's (kind ${KEY_SECRET_KINDS.join(', ')})`;
    for (const name of reads.cert)
      if (kindOf(name) !== 'tls')
        return `${path} reads {{cert ${name}}}, but ${name} is ${kindOf(name) === 'random' ? 'a random secret' : `an ${kindOf(name)} key`}: a certificate is a tls secret's`;
    const problem = readingProblem(definition, path, reads);
    if (problem) return problem;
  }
  for (const [name, secret] of Object.entries(definition.secrets)) {
    for (const text of secret.names ?? []) {
      const reads = readsOf(text);
      const problem = readingProblem(definition, `secrets.${name}.names`, reads, true);
      if (problem) return problem;
      // The state's CA vouches for a name to everyone who trusts it (berth api among them):
      // a name a node tells of itself would let any node have another's name certified.
      const told = MACHINE_FACTS.find((fact) => reads.fact.has(fact));
      if (told)
        return `secrets.${name}.names reads {{fact ${told}}}, which the node tells of itself: the state's CA certifies only names berth.json gives, so that no node can have another's name certified; name it with {{fact host}} (where berth reaches the node), {{fact node}} or a {{value NAME}}`;
    }
    if (secret.cert !== undefined && Object.hasOwn(definition.files, secret.cert))
      return `secrets.${name}.cert ${secret.cert} is a file of the module too: berth writes the certificate there itself`;
    if (secret.match === undefined) continue;
    const file = ownValue(definition.files, secret.path);
    if (!file?.content.includes(`{{secret ${name}}}`))
      return `secrets.${name} is inside ${secret.path}, so the module needs a file ${secret.path} whose content places it with {{secret ${name}}}`;
  }
  const issuer = definition.provides?.issuer;
  if (issuer !== undefined)
    return readingProblem(definition, 'provides.issuer', readsOf(issuer), true);
  return undefined;
}

/** How a template spelled what it reads of a secret: `{{jwk signing}}`. */
function placeholderOf(reads: Reads, name: string): string {
  for (const kind of ['secret', 'public', 'jwk', 'cert'] as const)
    if (reads[kind].has(name)) return `{{${kind} ${name}}}`;
  return `{{secret ${name}}}`;
}

/**
 * What is wrong with the values and facts a template reads, at `where`; a template that
 * is no file's (`valuesAlone`: a certificate's names, an issuer) reads nothing else.
 */
function readingProblem(
  definition: ModuleDefinition,
  where: string,
  reads: Reads,
  valuesAlone = false,
): string | undefined {
  if (valuesAlone && (reads.ca || keysRead(reads).size + reads.secret.size > 0))
    return `${where} reads values and facts alone ({{value NAME}}, {{fact NAME}}), never a secret, key or certificate`;
  for (const name of reads.value)
    if (!Object.hasOwn(definition.values, name))
      return `${where} reads a value, {{value ${name}}}, that the module does not declare under values${didYouMean(name, Object.keys(definition.values))}`;
  for (const name of reads.fact)
    if (!isFactName(name))
      return `${where} reads a fact, {{fact ${name}}}, that berth does not know${didYouMean(name, FACT_NAMES)}; the facts are ${FACT_NAMES.join(', ')}`;
  return undefined;
}

/** The paths (under the catalog directory) of the templates a definition's files come from. */
export function sourcesOf(json: unknown): string[] {
  const files = (json as { files?: Record<string, { source?: unknown }> })?.files;
  if (!files || typeof files !== 'object') return [];
  return Object.values(files).flatMap((file) =>
    typeof file?.source === 'string' ? [file.source] : [],
  );
}

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

/**
 * Checks a definition read as JSON text, with the words a user needs to mend it; each
 * file's `source` is read through `readSource` (a template under the catalog directory).
 */
export async function parseDefinition(
  name: string,
  where: string,
  text: string,
  readSource: (source: string) => Promise<string> = async (source) => {
    throw new Error(`no catalog directory to read ${source} from`);
  },
): Promise<CatalogEntry> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { name, problem: `${where} is not valid JSON: ${(error as Error).message}` };
  }
  const result = v.safeParse(ModuleDefinitionSchema, json);
  if (!result.success)
    return {
      name,
      problem: `${where} is not valid: ${describeIssues(result.issues, ModuleDefinitionSchema)}`,
    };
  const files: ModuleDefinition['files'] = {};
  for (const [path, file] of Object.entries(result.output.files)) {
    if (file.content !== undefined) {
      files[path] = { ...file, content: file.content };
      continue;
    }
    const source = file.source as string;
    try {
      files[path] = { ...file, content: await readSource(source) };
    } catch (error) {
      return {
        name,
        problem: `${where} is not valid: files.${path}.source ${source} cannot be read: ${(error as Error).message}`,
      };
    }
  }
  const definition: ModuleDefinition = { ...result.output, files };
  const problem = crossCheck(definition);
  if (problem) return { name, problem: `${where} is not valid: ${problem}` };
  return { name, definition };
}
