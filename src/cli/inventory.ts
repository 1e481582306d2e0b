import type { NodesAnswer } from '../commands/nodes.ts';
import { valueLine } from '../model/values-shown.ts';
import type { AnswerWords } from './answer-words.ts';
import { toRunWords } from './to-run-words.ts';

/**
 * `berth nodes [target]` in words: a node a line; named, a node or a target shows its
 * values too, a line each under it, with where each came from.
 */
export const nodesWords: AnswerWords<NodesAnswer> = {
  words(answer, { words }, io) {
    if ('refused' in answer) return;
    if (answer.nodes.length === 0) {
      io.out('no node yet: add one under nodes in berth.json');
      return;
    }
    const [target] = words;
    io.out(
      answer.nodes
        .map((item) =>
          [
            [
              item.node,
              `${item.kind} ${item.address}${item.sudo ? ' (sudo)' : ''}`,
              item.groups.length ? `groups ${item.groups.join(', ')}` : '',
              `to run: ${toRunWords(item.assigned, item.declared)}`,
            ]
              .filter(Boolean)
              .join('  '),
            ...(target === undefined ? [] : item.values.map((value) => `  ${valueLine(value)}`)),
          ].join('\n'),
        )
        .join('\n'),
    );
  },
};
