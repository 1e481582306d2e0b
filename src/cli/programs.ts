import type { EdgeName } from '../commands/table.ts';
import type { Program } from './program.ts';

/**
 * The programs of this Node edge, by the name their entry of the command table gives:
 * each listens, reads the state directory's files, or is the option parser's own help,
 * so the standards-only table names them and this file supplies them. The type checker
 * holds the list complete against the table, and each is loaded at its first run.
 */
// `--listen` and `--audience` hold the default the table names unless given: cac fills it in.
export const PROGRAMS: { [N in EdgeName]: Program } = {
  act: async (given) => (await import('./table-command.ts')).runPlan(given),
  api: async ({ options, location, io }) =>
    (await import('./api.ts')).runApi(
      {
        listen: options.listen ?? '',
        issuer: options.issuer ?? '',
        audience: options.audience ?? '',
        issuerCa: options.issuerCa ?? [],
        lockWaitMs: options.lockTimeout,
      },
      location(),
      io,
    ),
  view: async ({ options, location, io }) =>
    (await import('./view.ts')).runView(
      { listen: options.listen ?? '', state: options.state, lockWaitMs: options.lockTimeout },
      location(),
      io,
    ),
  'copy-state': async ({ options, location, io }) =>
    (await import('./copy-state.ts')).runCopyState(
      options.to,
      location(),
      options.json ?? false,
      io,
    ),
  validate: async (given) => (await import('./validate.ts')).runValidate(given),
  completion: async ({ words, io }) =>
    (await import('./completion.ts')).printCompletion(words[0], io),
  help: async ({ words, help }) => help(words[0]),
};
