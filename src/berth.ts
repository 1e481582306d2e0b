#!/usr/bin/env node
import { COMPLETE } from './cli/complete-word.ts';
import { processIo } from './cli/io.ts';

const argv = process.argv.slice(2);
// A shell asks for candidates at each Tab: answered without evaluating the option parser
// and the commands, which a Tab does not need.
process.exitCode =
  argv[0] === COMPLETE
    ? (await import('./cli/complete.ts')).printCandidates(argv.slice(1), processIo)
    : await (await import('./cli/main.ts')).runCli(argv);
