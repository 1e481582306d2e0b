#!/usr/bin/env node
import { runCli } from './cli/main.ts';

// A reader that goes away (`berth log | head -1`) is not a failure of berth: the
// act is done and journaled whether or not anyone reads what it said.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

process.exitCode = await runCli(process.argv.slice(2));
