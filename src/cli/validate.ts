import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as v from 'valibot';
import { RefusedSchema, refusedFor } from '../commands/reading-answer.ts';
import { ConfigError } from '../config/config.ts';
import { fileCatalog } from '../config/file-catalog.ts';
import { fileConfig } from '../config/file-config.ts';
import type { Catalog, ModuleDefinition } from '../model/catalog.ts';
import { isName } from '../model/names.ts';
import { type Entries, moduleResolver } from '../model/resolve.ts';
import { enveloped, FORMAT_VERSION } from '../model/result.ts';
import { defaultSettings, type Settings } from '../model/settings.ts';
import { didYouMean } from '../utils/did-you-mean.ts';
import { refusalWords } from '../words/refusals.ts';
import { exitOfAnswer } from './io.ts';
import type { Program } from './program.ts';
import { valuesProblems } from './validate-values.ts';

/** A problem `berth validate` found: the file it is in, and what is wrong there, in words. */
export const ProblemSchema = v.object({ file: v.string(), problem: v.string() });
export type Problem = v.InferOutput<typeof ProblemSchema>;

/** Whether berth.json and the catalog are valid, and every problem; `invalid_config` when not. */
export const ValidateAnswerSchema = v.union([
  RefusedSchema,
  v.object({
    format_version: v.literal(FORMAT_VERSION),
    valid: v.boolean(),
    code: v.optional(v.literal('invalid_config')),
    problems: v.array(ProblemSchema),
    /** How many modules the catalog holds, and where it is. */
    modules: v.number(),
    catalog: v.string(),
  }),
]);
export type ValidateAnswer = v.InferOutput<typeof ValidateAnswerSchema>;

/**
 * `berth validate`: reads berth.json, every catalog definition and every template they
 * name, and lists every problem, so a broken definition is found before an act meets it.
 * It reads the state directory's files as they are, so it is a program of this edge.
 */
export const runValidate: Program = async ({ location, options, io }) => {
  const answer = await validateAnswer(location().dir);
  if (options.json) io.out(JSON.stringify(answer));
  else if ('refused' in answer) io.err(answer.refused);
  else if (answer.valid)
    io.out(
      `berth.json and the ${answer.modules} module${answer.modules === 1 ? '' : 's'} of ${answer.catalog} are valid`,
    );
  else io.out(answer.problems.map((item) => `${item.file}: ${item.problem}`).join('\n'));
  return exitOfAnswer(answer.code);
};

async function validateAnswer(stateDir: string): Promise<ValidateAnswer> {
  try {
    const { problems, modules, catalogDir } = await validate(stateDir);
    const valid = problems.length === 0;
    return {
      format_version: FORMAT_VERSION,
      valid,
      ...(valid ? {} : { code: 'invalid_config' as const }),
      problems,
      modules,
      catalog: catalogDir,
    };
  } catch (error) {
    const { refusal } = refusedFor(error);
    return enveloped({ refused: refusalWords(refusal), code: refusal.code });
  }
}

export async function validate(stateDir: string) {
  const problems: Problem[] = [];
  const settingsPath = join(stateDir, 'berth.json');
  let catalogDir: string;
  let catalog: Catalog;
  let run: Settings['run'] = {};
  let settings: Settings | undefined;
  try {
    const config = await fileConfig(stateDir)();
    catalogDir = resolve(stateDir, config.settings.catalog);
    catalog = config.catalog;
    settings = config.settings;
    run = config.settings.run;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push({ file: settingsPath, problem: withoutPath(error.message, settingsPath) });
    // The catalog is still checked: where berth.json says it is, if it says so, else the default.
    catalogDir = resolve(stateDir, await namedCatalog(settingsPath));
    catalog = fileCatalog(catalogDir);
  }
  const names = await catalog.names();
  // A module berth.json declares that the catalog has not: a converge would block on it.
  for (const [target, modules] of Object.entries(run))
    for (const [index, module] of modules.entries())
      if (!names.includes(module))
        problems.push({
          file: settingsPath,
          problem: `run.${target}.${index}: ${module} is not in the catalog${didYouMean(module, names)}`,
        });
  const files = await readdir(catalogDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  for (const file of files.filter((file) => file.endsWith('.json')).sort()) {
    const name = file.slice(0, -'.json'.length);
    if (!isName(name))
      problems.push({
        file: join(catalogDir, file),
        problem: `${JSON.stringify(name)} is not a module name (1 to 63 characters of a-z, 0-9 and -), so berth never reads this file`,
      });
  }
  const entries: Entries = new Map(
    await Promise.all(names.map(async (name) => [name, await catalog.entry(name)] as const)),
  );
  // Every module assigned: what is left is a need missing from the catalog, or a cycle.
  const resolveIn = moduleResolver(new Set(names), entries);
  for (const name of names) {
    const file = join(catalogDir, `${name}.json`);
    const entry = entries.get(name);
    if (!entry) continue;
    if ('problem' in entry) {
      problems.push({ file, problem: withoutPath(entry.problem, file) });
      continue;
    }
    const resolution = resolveIn(name);
    if (resolution.ok) continue;
    const { unresolved } = resolution;
    if (unresolved.why === 'need-not-in-catalog')
      problems.push({
        file,
        problem: `needs: ${unresolved.need} is not in the catalog${didYouMean(unresolved.need, names)}`,
      });
    else if (unresolved.why === 'cycle')
      problems.push({ file, problem: `needs: a cycle, ${unresolved.cycle.join(' → ')}` });
  }
  // The values berth.json gives against those the valid definitions declare.
  if (settings) {
    const definitions = new Map<string, ModuleDefinition>();
    for (const [name, entry] of entries)
      if ('definition' in entry) definitions.set(name, entry.definition);
    const allRead = definitions.size === entries.size;
    for (const item of valuesProblems(settings, definitions, { allRead }))
      problems.push({
        file: item.module === undefined ? settingsPath : join(catalogDir, `${item.module}.json`),
        problem: item.problem,
      });
  }
  return { problems, modules: names.length, catalogDir };
}

/** A problem's words without the file they begin with: the file is said beside them. */
function withoutPath(problem: string, file: string): string {
  if (problem.startsWith(`${file} is not valid: `))
    return problem.slice(`${file} is not valid: `.length);
  return problem.startsWith(`${file} `) ? problem.slice(file.length + 1) : problem;
}

/** The catalog directory a berth.json that is not valid still names, else the default. */
async function namedCatalog(path: string): Promise<string> {
  try {
    const named = (JSON.parse(await readFile(path, 'utf8')) as { catalog?: unknown }).catalog;
    if (typeof named === 'string' && named !== '') return named;
  } catch {
    // Not JSON, or not there: the default.
  }
  return defaultSettings().catalog;
}
