import { HOOKS, type ModuleShown, type ModulesAnswer } from '../commands/modules.ts';
import { valueWords } from '../model/values.ts';
import type { AnswerWords } from './answer-words.ts';

/** `berth modules [name]` in words: the catalog, a module a line, or one module whole. */
export const modulesWords: AnswerWords<ModulesAnswer> = {
  words(answer, { words }, io) {
    if ('refused' in answer) return;
    if (words[0] !== undefined) {
      for (const item of answer.modules) io.out(describeWhole(item));
      return;
    }
    if (answer.modules.length === 0) {
      io.out('the catalog holds no module yet');
      return;
    }
    io.out(
      answer.modules
        .map((item) =>
          'problem' in item
            ? `${item.name}  cannot be used: ${item.problem}`
            : `${item.name}  ${item.description || '(no description)'}`,
        )
        .join('\n'),
    );
  },
};

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
