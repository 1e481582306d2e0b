/** A line of a preview as the node page colours it. */
export type LineKind =
  | 'said'
  | 'module'
  | 'blocked'
  | 'digest-line'
  | 'diff-head'
  | 'diff-hunk'
  | 'diff-add'
  | 'diff-del'
  | 'diff-context'
  | 'diff-note';

/** Where a step's diff stands in the preview: four spaces in, under its `write` line. */
const DIFF_INDENT = '    ';

/**
 * A preview's words, a line each, with what each is: a module's heading, a blocker, the
 * digest, and the lines of a file's unified diff under its `write` step.
 */
export function previewLines(said: string): { kind: LineKind; text: string }[] {
  let inDiff = false;
  return said.split('\n').map((text) => {
    if (inDiff && text.startsWith(DIFF_INDENT)) return { kind: diffKind(text.slice(4)), text };
    inDiff = text.startsWith('  write ');
    if (/^(install|update|release) [a-z0-9][a-z0-9-]*:$/.test(text))
      return { kind: 'module', text };
    if (text.startsWith('blocked: ')) return { kind: 'blocked', text };
    if (/^digest [0-9a-f]{64}$/.test(text)) return { kind: 'digest-line', text };
    return { kind: 'said', text };
  });
}

function diffKind(line: string): LineKind {
  if (line.startsWith('+++ ') || line.startsWith('--- ')) return 'diff-head';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  if (line.startsWith(' ')) return 'diff-context';
  return 'diff-note';
}
