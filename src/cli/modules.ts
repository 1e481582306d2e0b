import type { CatalogEntry, ModuleDefinition } from '../catalog.ts';
import { fileConfig } from '../config/file-config.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { didYouMean } from '../did-you-mean.ts';
import { enveloped } from '../result.ts';
import { type Value, valueWords } from '../values.ts';
import { EXIT, type Io } from './io.ts';
import { readingFailed } from './reading-failed.ts';

const HOOKS = ['start', 'stop', 'reload', 'check'] as const;

/** One module as `berth modules` shows it: what it is, or why it cannot be used. */
export type ModuleShown =
  | {
      name: string;
      description: string;
      needs: string[];
      data: ModuleDefinition['data'];
      /** Names only: where a secret lives is shown, never a value (berth reads none here). */
      secrets: { name: string; path: string; inside: boolean }[];
      /** The values it reads: each with its type, its default when it has one, and what it is. */
      values: { name: string; type: string; default?: Value; description: string }[];
      files: { path: string; source?: string }[];
      hooks: Partial<Record<(typeof HOOKS)[number], string>>;
    }
  | { name: string; problem: string };

/** `berth modules [name]`: the catalog, a module a line, or one module whole. */
export async function showModules(
  name: string | undefined,
  location: StateLocation,
  json: boolean,
  io: Io,
): Promise<number> {
  try {
    const { catalog } = await fileConfig(location.dir)([]);
    const names = await catalog.names();
    if (name !== undefined) {
      const entry = await catalog.entry(name);
      if ('problem' in entry && entry.missing) {
        const refused = `the catalog has no module ${name}${didYouMean(name, names)}`;
        if (json) io.out(JSON.stringify(enveloped({ refused, code: 'unknown_module' })));
        else io.err(refused);
        return EXIT.refused;
      }
      const shown = shownOf(entry);
      if (json) io.out(JSON.stringify(enveloped({ modules: [shown] })));
      else io.out(describeWhole(shown));
      return 'problem' in shown ? EXIT.refused : EXIT.done;
    }
    const shown = await Promise.all(names.map(async (each) => shownOf(await catalog.entry(each))));
    if (json) io.out(JSON.stringify(enveloped({ modules: shown })));
    else if (shown.length === 0) io.out('the catalog holds no module yet');
    else
      io.out(
        shown
          .map((item) =>
            'problem' in item
              ? `${item.name}  cannot be used: ${item.problem}`
              : `${item.name}  ${item.description || '(no description)'}`,
          )
          .join('\n'),
      );
    return EXIT.done;
  } catch (error) {
    return readingFailed(error, io);
  }
}

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

function describeWhole(item: ModuleShown): string {
  if ('problem' in item) return `${item.name} cannot be used: ${item.problem}`;
  const list = (items: string[]) => (items.length ? items.join(', ') : 'none');
  const owned = (owner?: string | number, group?: string | number, mode?: string) => {
    const said = [
      owner === undefined && group === undefined ? '' : `${owner ?? ''}:${group ?? ''}`,
      mode ?? '',
    ].filter(Boolean);
    return said.length ? ` (${said.join(' ')})` : '';
  };
  return [
    `${item.name}: ${item.description || '(no description)'}`,
    `  needs: ${list(item.needs)}`,
    `  data: ${list(item.data.map((data) => `${data.path}${owned(data.owner, data.group, data.mode)}`))}`,
    `  secrets: ${list(item.secrets.map((secret) => `${secret.name} (${secret.inside ? 'in ' : ''}${secret.path})`))}`,
    `  values: ${list(item.values.map((value) => `${value.name} (${value.type}, ${value.default === undefined ? 'required' : `default ${valueWords(value.default)}`}${value.description ? `: ${value.description}` : ''})`))}`,
    `  files: ${list(item.files.map((file) => `${file.path}${file.source ? ` (from ${file.source})` : ''}`))}`,
    ...HOOKS.map((hook) => `  ${hook}: ${item.hooks[hook] ?? 'none'}`),
  ].join('\n');
}
