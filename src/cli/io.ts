/** Where the command line writes, so that tests and the binary share one path. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  env: process.env,
};

/** The exit codes: done, refused by the command, usage, stores. */
export const EXIT = { done: 0, refused: 1, usage: 2, stores: 3 } as const;

export class UsageError extends Error {
  override name = 'UsageError';
}
