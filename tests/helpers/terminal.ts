import { spawn } from 'node:child_process';
import { BERTH } from './world.ts';

/**
 * The real binary at a terminal: in a pseudo-terminal that util-linux's `script` makes
 * (Node has none built in), so that its standard input and output are a terminal, and
 * what is typed goes through the terminal's own line discipline (echo, Ctrl-C, Ctrl-D).
 */
export interface AtTerminal {
  /** Resolves once the terminal has shown `text`. */
  shown(text: string): Promise<void>;
  /** Types at the terminal: `yes\n`, or `\x03` (Ctrl-C). */
  type(text: string): void;
  /** Ends standard input: the terminal reads it as Ctrl-D. */
  endInput(): void;
  /** berth's exit code, and all the terminal showed (its `\r\n` as `\n`). */
  ended: Promise<{ code: number; shown: string }>;
}

export function berthAtTerminal(state: string, args: readonly string[]): AtTerminal {
  // exec: berth itself, not a shell waiting on it, is what Ctrl-C reaches and what exits.
  const command = `exec ${[process.execPath, BERTH, '--state', state, ...args].map(quoted).join(' ')}`;
  const { NODE_EXTRA_CA_CERTS: _, BERTH_STATE: __, ...env } = process.env;
  const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    env: { ...env, SHELL: '/bin/sh', TERM: 'dumb' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let shown = '';
  const waiting: { text: string; done: () => void }[] = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    shown += chunk.replaceAll('\r\n', '\n');
    for (const wait of waiting.splice(0))
      if (shown.includes(wait.text)) wait.done();
      else waiting.push(wait);
  });
  const ended = new Promise<{ code: number; shown: string }>((done) =>
    child.on('close', (code) => done({ code: code ?? -1, shown })),
  );
  return {
    shown: (text) =>
      new Promise((done, fail) => {
        if (shown.includes(text)) return done();
        waiting.push({ text, done });
        ended.then(() => fail(new Error(`berth ended without showing ${text}:\n${shown}`)));
      }),
    type: (text) => child.stdin.write(text),
    endInput: () => child.stdin.end(),
    ended,
  };
}

function quoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
