/**
 * Where each code of the closed list is produced through the user's faces: on the command
 * line (the real binary, `--json`) and over the Command API (a real `berth api`, a real
 * socket), for one node and for a group. Each cell names the suite of tests/codes/ that
 * produces it there, a test file elsewhere that does (asserting the code), or why it
 * cannot arise there. coverage.test.ts checks this table names every code of src/model/codes.ts
 * and no other; each suite's last test checks it produced what the table says it does.
 */
import type { Code } from '../../src/model/codes.ts';

export const CELLS = ['cli node', 'cli group', 'api node', 'api group'] as const;
export type Cell = (typeof CELLS)[number];

/** The suites of tests/codes/, each `<name>.test.ts`. */
export const SUITES = [
  'requests',
  'http',
  'commands',
  'gate',
  'acts',
  'interrupts',
  'blockers',
  'packages',
  'no-manager',
  'stores',
] as const;
export type Suite = (typeof SUITES)[number];

export type Where =
  | Suite
  /** A test file of another suite that produces the code on this face (and asserts it). */
  | { in: string }
  /** Why the code cannot arise on this face. */
  | { never: string };

type Row = Record<Cell, Where>;

const everywhere = (suite: Suite): Row => ({
  'cli node': suite,
  'cli group': suite,
  'api node': suite,
  'api group': suite,
});

/** Produced on the command line only, for `why` the API never gives it. */
const lineOnly = (suite: Suite, why: string, group: Where = suite): Row => ({
  'cli node': suite,
  'cli group': group,
  'api node': { never: why },
  'api group': { never: why },
});

/** Produced over the API only, for `why` the command line never gives it. */
const apiOnly = (suite: Suite, why: string): Row => ({
  'cli node': { never: why },
  'cli group': { never: why },
  'api node': suite,
  'api group': suite,
});

/** Produced for a group (a target of several nodes) only. */
const groupOnly = (suite: Suite, why: string): Row => ({
  'cli node': { never: why },
  'cli group': suite,
  'api node': { never: why },
  'api group': suite,
});

const NO_SERVER = 'the command line is no server: it reads no HTTP request';
const BEFORE_THE_BODY =
  'answered from the request line and headers alone, before a body names a node or a group';

/** The HTTP server's own refusals: once a request, as no body names a target then. */
const httpOnly = (where: Where): Row => ({
  'cli node': { never: NO_SERVER },
  'cli group': { never: NO_SERVER },
  'api node': where,
  'api group': { never: BEFORE_THE_BODY },
});

/** Produced by `berth act FILE`, the command line's alone, on a node and a group. */
const planFile = (): Row => {
  const where = { in: 'tests/commands/plan-file.test.ts' };
  const never = { never: NO_ROUTE('berth act FILE') };
  return { 'cli node': where, 'cli group': where, 'api node': never, 'api group': never };
};

const NO_ROUTE = (what: string) =>
  `${what} is the command line's alone: no route of the API does it`;
const NO_MINT = "the API's request has no mint: `--mint` is the command line's";
const NO_ROTATE = "the API's request has no rotate: `--rotate` is the command line's";

export const WHERE: Record<Code, Row> = {
  usage: {
    'cli node': 'requests',
    'cli group': 'requests',
    'api node': { never: 'the API reads a JSON body, not words and flags (invalid_request)' },
    'api group': { never: 'the API reads a JSON body, not words and flags (invalid_request)' },
  },
  fields_missing: everywhere('requests'),
  invalid_request: apiOnly('http', 'the command line makes the request from its words (usage)'),
  unauthorized: httpOnly('http'),
  no_route: httpOnly('http'),
  body_too_large: httpOnly('http'),
  headers_too_large: httpOnly('http'),
  request_timeout: httpOnly({ in: 'tests/reliability/slow-clients.test.ts' }),
  shutting_down: httpOnly({ in: 'tests/reliability/graceful-close.test.ts' }),
  stores_unavailable: everywhere('acts'),
  store_not_empty: {
    'cli node': 'stores',
    'cli group': { never: 'copy-state copies the whole state directory: it takes no target' },
    'api node': { never: NO_ROUTE('copy-state') },
    'api group': { never: NO_ROUTE('copy-state') },
  },
  invalid_config: everywhere('requests'),
  invalid_plan: lineOnly('requests', NO_ROUTE('berth act FILE'), {
    never: 'a file that is no plan names no target',
  }),
  invalid_name: everywhere('requests'),
  invalid_target: groupOnly(
    'requests',
    'a word with no comma, ! or @ is one node name: a bad one is invalid_name',
  ),
  unknown_node: everywhere('requests'),
  unknown_group: groupOnly('requests', 'one node name names no group'),
  not_granted: apiOnly(
    'requests',
    "grants are for the API's subjects: the command line is the operator's",
  ),
  unknown_module: everywhere('commands'),
  invalid_module: everywhere('commands'),
  not_assigned: everywhere('commands'),
  already_managed: everywhere('commands'),
  not_managed: lineOnly('commands', NO_ROUTE('forget')),
  still_assigned: lineOnly('commands', NO_ROUTE('forget')),
  declared_in_config: everywhere('commands'),
  still_needed: everywhere('commands'),
  not_adopted: everywhere('commands'),
  not_in_account: everywhere('commands'),
  secret_unreadable: everywhere('commands'),
  secret_not_kept: lineOnly('commands', NO_ROUTE('berth secret')),
  vault_unopened: everywhere('commands'),
  refresh_not_on_act: lineOnly('commands', "the API's request has no refresh"),
  check_failed: {
    'cli node': { in: 'tests/commands/hooks.test.ts' },
    'cli group': { in: 'tests/commands/hooks.test.ts' },
    'api node': { never: NO_ROUTE('berth status --check') },
    'api group': { never: NO_ROUTE('berth status --check') },
  },
  rotate_unknown: lineOnly('commands', NO_ROTATE),
  rotate_not_a_key: lineOnly('commands', NO_ROTATE),
  digest_needed: everywhere('gate'),
  digest_stale: everywhere('gate'),
  plan_edited: planFile(),
  plan_elsewhere: planFile(),
  plan_acted_on: planFile(),
  invalid_digest: everywhere('gate'),
  blocked: everywhere('gate'),
  lock_timeout: everywhere('acts'),
  unreachable: everywhere('acts'),
  interrupted: everywhere('interrupts'),
  hook_failed: everywhere('acts'),
  hook_timeout: everywhere('acts'),
  package_failed: everywhere('packages'),
  step_failed: everywhere('acts'),
  refresh_failed: lineOnly('acts', "the API's request has no refresh"),
  failed: everywhere('acts'),
  internal_error: {
    'cli node': { in: 'tests/commands/unforeseen.test.ts' },
    'cli group': { in: 'tests/commands/unforeseen.test.ts' },
    'api node': { in: 'tests/core/api.test.ts' },
    'api group': { never: 'an unexpected failure in the app is one answer, whatever the target' },
  },
  journal_failed: everywhere('acts'),
  not_begun: groupOnly('acts', 'one node is one batch: no batch before it'),
  nodes_refused: groupOnly('gate', 'one node refuses for one reason'),
  does_not_resolve: everywhere('blockers'),
  needs_not_running: everywhere('blockers'),
  held_not_managed: everywhere('blockers'),
  secret_differs: everywhere('blockers'),
  link: everywhere('blockers'),
  no_such_account: everywhere('blockers'),
  account_stale: everywhere('commands'),
  mint_not_a_secret: lineOnly('blockers', NO_MINT),
  mint_found: lineOnly('blockers', NO_MINT),
  mint_kept: lineOnly('blockers', NO_MINT),
  mint_over_data: everywhere('blockers'),
  package_unavailable: everywhere('packages'),
  no_package_manager: everywhere('no-manager'),
  packages_not_here: everywhere('blockers'),
  package_refused: everywhere('packages'),
  package_malformed: {
    'cli node': { in: 'tests/fleet/packages-exact.test.ts' },
    'cli group': { in: 'tests/fleet/packages-exact.test.ts' },
    'api node': { in: 'tests/fleet/packages-exact.test.ts' },
    'api group': { in: 'tests/fleet/packages-exact.test.ts' },
  },
  value_missing: everywhere('blockers'),
  value_wrong_type: everywhere('blockers'),
  value_undeclared: everywhere('blockers'),
  fact_unknown: everywhere('blockers'),
  not_a_key: everywhere('blockers'),
  certificate_refused: everywhere('blockers'),
  certificate_name: everywhere('blockers'),
};

/** What `suite` claims to produce: `code on cell`, as faces.ts records it. */
export function claimsOf(suite: Suite): string[] {
  return Object.entries(WHERE).flatMap(([code, row]) =>
    CELLS.filter((cell) => row[cell] === suite).map((cell) => `${code} on ${cell}`),
  );
}
