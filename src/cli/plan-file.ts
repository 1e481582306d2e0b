import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import type { LineOptions } from '../commands/options.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { writeFileAtomic } from '../fs/atomic-file.ts';
import type { RefusalOf } from '../model/refusal.ts';
import type { CommandRequest } from '../model/request.ts';
import { type CommandAnswer, CommandAnswerSchema } from '../model/result.ts';
import { describeIssues } from '../utils/schema-issues.ts';

/**
 * A plan file: a take or converge preview written with `--out FILE`, for review, that
 * `berth act FILE` acts on exactly. It holds what the act needs (the command, target,
 * module or filter, `--mint` and `--rotate` names, the digest), the state it was made with, and the
 * preview's typed result as `--json` prints it, which holds no secret value. The stores
 * keep the digest of its whole content (commands/plan-records.ts), so a file edited by
 * hand is refused. `format_version` changes when a field changes meaning: 2 when the
 * whole content came to be covered.
 */
export const PLAN_FORMAT_VERSION = 2;

/** What names a file as a berth plan, so that another tool's JSON is refused as such. */
const PLAN_KIND = 'berth plan';

const Named = v.pipe(v.string(), v.minLength(1, 'it is empty'));

const common = {
  format_version: v.literal(PLAN_FORMAT_VERSION),
  kind: v.literal(PLAN_KIND),
  target: Named,
  digest: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'a digest is 64 lower-case hex characters')),
  previewed_at: v.pipe(v.string(), v.isoTimestamp('a time as berth writes it')),
  /** The state directory it was made with, for the words of an act made with another. */
  state: Named,
  preview: CommandAnswerSchema,
};

export const PlanFileSchema = v.pipe(
  v.variant('command', [
    v.strictObject({
      ...common,
      command: v.literal('take'),
      module: Named,
      mint: v.array(Named),
    }),
    v.strictObject({
      ...common,
      command: v.literal('converge'),
      filter: v.optional(Named),
      /** `--rotate` names: the act places the keys the preview named. */
      rotate: v.optional(v.array(Named)),
    }),
  ]),
  v.check(
    (plan) => plan.preview.digest === plan.digest,
    'its digest is not the digest of the preview it holds',
  ),
);
export type PlanFile = v.InferOutput<typeof PlanFileSchema>;

/** The plan of a take or converge preview, or undefined when it was refused (no digest). */
export function planOf(
  command: string,
  request: CommandRequest,
  { options, location }: { options: LineOptions; location: StateLocation },
  preview: CommandAnswer,
  now: Date,
): PlanFile | undefined {
  const { digest } = preview;
  if (digest === undefined) return undefined;
  const head = { format_version: PLAN_FORMAT_VERSION, kind: PLAN_KIND } as const;
  const made = {
    target: request.node,
    digest,
    previewed_at: now.toISOString(),
    state: location.dir,
    preview,
  };
  if (command === 'take')
    return {
      ...head,
      command: 'take',
      ...made,
      module: request.module,
      mint: [...(options.mint ?? [])],
    };
  const filter = request.filter ? { filter: request.filter } : {};
  const rotate = options.rotate?.length ? { rotate: [...options.rotate] } : {};
  return { ...head, command: 'converge', ...made, ...filter, ...rotate };
}

/**
 * What the stores keep the digest of: the whole file as written, or as read (every field,
 * known or not, as JSON has it), but the two that name it a plan of this format.
 */
export function contentOf(plan: object): Record<string, unknown> {
  const { format_version: _, kind: __, ...content } = plan as Record<string, unknown>;
  return content;
}

/**
 * Writes a plan whole or not at all (a reviewer never reads half of one), readable by
 * its owner alone: it shows the files' diffs, which may say how a service is set up.
 * Answers the failure in words, or undefined.
 */
export async function writePlan(
  path: string,
  plan: PlanFile,
): Promise<RefusalOf<'plan-unwritten'> | undefined> {
  try {
    await writeFileAtomic(path, `${JSON.stringify(plan, null, 2)}\n`, { mode: 0o600 });
    return undefined;
  } catch (error) {
    const message =
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'its directory does not exist'
        : fileFailure(error);
    return { kind: 'plan-unwritten', code: 'failed', file: path, message };
  }
}

/** A plan file as read, or why it cannot be acted on, in words. */
export async function readPlan(
  path: string,
): Promise<{ ok: true; plan: PlanFile; read: object } | { ok: false; refused: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return { ok: false, refused: `berth cannot read the plan file ${path}: ${fileFailure(error)}` };
  }
  const notOne = `${path} is not a berth plan file (berth take or converge writes one with --out FILE)`;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, refused: `${notOne}: it is not JSON` };
  }
  const fields = json && typeof json === 'object' && !Array.isArray(json) ? json : {};
  if (!('kind' in fields) || fields.kind !== PLAN_KIND) return { ok: false, refused: notOne };
  if ('format_version' in fields && fields.format_version !== PLAN_FORMAT_VERSION)
    return {
      ok: false,
      refused: `${path} is a berth plan file of format ${JSON.stringify(fields.format_version)}; this berth reads format ${PLAN_FORMAT_VERSION}: preview again with --out`,
    };
  const parsed = v.safeParse(PlanFileSchema, json);
  if (!parsed.success)
    return {
      ok: false,
      refused: `${path} is not a valid berth plan file: ${describeIssues(parsed.issues, PlanFileSchema)}`,
    };
  return { ok: true, plan: parsed.output, read: fields };
}

/** A file that could not be read or written, in words rather than an errno. */
function fileFailure(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a part of its path is not a directory';
    default:
      return (error as Error).message;
  }
}
