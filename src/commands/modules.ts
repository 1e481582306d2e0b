import * as v from 'valibot';
import type { CatalogEntry } from '../model/catalog.ts';
import { FORMAT_VERSION } from '../model/result.ts';
import { closest } from '../utils/did-you-mean.ts';
import type { AnswerFunction } from './command-shape.ts';
import { RefusedSchema, refused, refusedFor } from './reading-answer.ts';

export const HOOKS = ['start', 'stop', 'reload', 'check'] as const;

const Owner = v.optional(v.union([v.string(), v.number()]));

/** One module as `berth modules` shows it: what it is, or why it cannot be used. */
export const ModuleShownSchema = v.union([
  v.object({
    name: v.string(),
    description: v.string(),
    needs: v.array(v.string()),
    data: v.array(
      v.object({ path: v.string(), owner: Owner, group: Owner, mode: v.optional(v.string()) }),
    ),
    /** Names only: where a secret lives is shown, never a value (berth reads none here). */
    secrets: v.array(v.object({ name: v.string(), path: v.string(), inside: v.boolean() })),
    /** The values it reads: each with its type, its default when it has one, and what it is. */
    values: v.array(
      v.object({
        name: v.string(),
        type: v.string(),
        default: v.optional(v.union([v.string(), v.number(), v.boolean()])),
        description: v.string(),
      }),
    ),
    files: v.array(v.object({ path: v.string(), source: v.optional(v.string()) })),
    hooks: v.partial(
      v.object({ start: v.string(), stop: v.string(), reload: v.string(), check: v.string() }),
    ),
  }),
  v.object({ name: v.string(), problem: v.string() }),
]);
export type ModuleShown = v.InferOutput<typeof ModuleShownSchema>;

/** The catalog, or one module (a list of one); `invalid_module` when that one cannot be used. */
export const ModulesAnswerSchema = v.union([
  RefusedSchema,
  v.object({
    format_version: v.literal(FORMAT_VERSION),
    code: v.optional(v.literal('invalid_module')),
    modules: v.array(ModuleShownSchema),
  }),
]);
export type ModulesAnswer = v.InferOutput<typeof ModulesAnswerSchema>;

/** `berth modules [name]`: the catalog, or one module whole. */
export const modules: AnswerFunction<ModulesAnswer> = async ({ words }, deps) => {
  const [name] = words;
  try {
    const { catalog } = await deps.loadConfig([]);
    const names = await catalog.names();
    if (name !== undefined) {
      const entry = await catalog.entry(name);
      if ('problem' in entry && entry.missing)
        return refused({
          kind: 'no-module',
          code: 'unknown_module',
          module: name,
          ...(closest(name, names) === undefined ? {} : { meant: closest(name, names) }),
        });
      const shown = shownOf(entry);
      return {
        format_version: FORMAT_VERSION,
        ...('problem' in shown && { code: 'invalid_module' as const }),
        modules: [shown],
      };
    }
    const shown = await Promise.all(names.map(async (each) => shownOf(await catalog.entry(each))));
    return { format_version: FORMAT_VERSION, modules: shown };
  } catch (error) {
    return refusedFor(error);
  }
};

function shownOf(entry: CatalogEntry): ModuleShown {
  if ('problem' in entry) return { name: entry.name, problem: entry.problem };
  const { definition } = entry;
  return {
    name: entry.name,
    description: definition.description,
    needs: definition.needs,
    data: definition.data,
    secrets: Object.entries(definition.secrets).map(([name, secret]) => ({
      name,
      path: secret.path,
      inside: secret.match !== undefined,
    })),
    values: Object.entries(definition.values).map(([name, spec]) => ({
      name,
      type: spec.type,
      ...(spec.default === undefined ? {} : { default: spec.default }),
      description: spec.description,
    })),
    files: Object.entries(definition.files).map(([path, file]) => ({
      path,
      ...(file.source === undefined ? {} : { source: file.source }),
    })),
    hooks: Object.fromEntries(
      HOOKS.flatMap((hook) => (definition[hook] === undefined ? [] : [[hook, definition[hook]]])),
    ),
  };
}
