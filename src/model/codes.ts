import * as v from 'valibot';

/**
 * How a code is answered, wherever it arises: the Command API's HTTP status, and the
 * command line's exit (0 done, 1 refused by the command, 2 usage, 3 the stores). A
 * command's own refusals are the seed's 409 and exit 1; what comes before a command is
 * the request's (400, 401, 404, 413, …), or the stores' (503, exit 3).
 */
export interface Answering {
  status: number;
  exit: 1 | 2 | 3;
}

const REQUEST = { status: 400, exit: 2 } as const;
const STORES = { status: 503, exit: 3 } as const;
const REFUSED = { status: 409, exit: 1 } as const;

/**
 * Every code a refusal or a blocker carries, in one closed table with how each is
 * answered: scripts and the view match these, never the words beside them. docs/codes.md
 * says when each is given and what to do; a code is added here and there together, and
 * never changes meaning.
 */
export const CODE_TABLE = {
  // The request, before any node.
  usage: REQUEST,
  fields_missing: REQUEST,
  invalid_request: REQUEST,
  // A file given to `berth act` that is not a plan: a usage error (the command line's alone).
  invalid_plan: REQUEST,
  unauthorized: { status: 401, exit: 1 },
  no_route: { status: 404, exit: 2 },
  body_too_large: { status: 413, exit: 2 },
  headers_too_large: { status: 431, exit: 2 },
  request_timeout: { status: 408, exit: 2 },
  shutting_down: STORES,
  stores_unavailable: STORES,
  store_not_empty: REFUSED,
  invalid_config: REFUSED,
  invalid_name: REFUSED,
  invalid_target: REFUSED,
  unknown_node: REFUSED,
  unknown_group: REFUSED,
  not_granted: REFUSED,
  // A command's own refusals.
  unknown_module: REFUSED,
  invalid_module: REFUSED,
  not_assigned: REFUSED,
  already_managed: REFUSED,
  not_managed: REFUSED,
  still_assigned: REFUSED,
  declared_in_config: REFUSED,
  still_needed: REFUSED,
  not_adopted: REFUSED,
  not_in_account: REFUSED,
  secret_unreadable: REFUSED,
  secret_not_kept: REFUSED,
  vault_unopened: REFUSED,
  refresh_not_on_act: REFUSED,
  check_failed: REFUSED,
  rotate_unknown: REFUSED,
  rotate_not_a_key: REFUSED,
  // The gate between a preview and its act.
  digest_needed: REFUSED,
  digest_stale: REFUSED,
  invalid_digest: REFUSED,
  blocked: REFUSED,
  plan_edited: REFUSED,
  plan_elsewhere: REFUSED,
  plan_acted_on: REFUSED,
  // An act that began.
  lock_timeout: STORES,
  unreachable: REFUSED,
  interrupted: REFUSED,
  hook_failed: REFUSED,
  hook_timeout: REFUSED,
  package_failed: REFUSED,
  step_failed: REFUSED,
  refresh_failed: REFUSED,
  failed: REFUSED,
  journal_failed: REFUSED,
  not_begun: REFUSED,
  nodes_refused: REFUSED,
  // berth itself failed where it foresaw no failure, while answering (500).
  internal_error: { status: 500, exit: 1 },
  // Blockers: what stands in the way of a node's act (a preview with one is still 200).
  does_not_resolve: REFUSED,
  needs_not_running: REFUSED,
  held_not_managed: REFUSED,
  secret_differs: REFUSED,
  link: REFUSED,
  no_such_account: REFUSED,
  account_stale: REFUSED,
  mint_not_a_secret: REFUSED,
  mint_found: REFUSED,
  mint_kept: REFUSED,
  mint_over_data: REFUSED,
  package_unavailable: REFUSED,
  no_package_manager: REFUSED,
  packages_not_here: REFUSED,
  package_refused: REFUSED,
  package_malformed: REFUSED,
  value_missing: REFUSED,
  value_wrong_type: REFUSED,
  value_undeclared: REFUSED,
  fact_unknown: REFUSED,
  not_a_key: REFUSED,
  certificate_refused: REFUSED,
  certificate_name: REFUSED,
} as const satisfies Record<string, Answering>;

/** The closed list, in the table's order. */
export const CODES = Object.keys(CODE_TABLE) as (keyof typeof CODE_TABLE)[];

export const CodeSchema = v.pipe(
  v.picklist(CODES),
  v.description('Why, as a code from the closed list in docs/codes.md'),
);
export type Code = v.InferOutput<typeof CodeSchema>;

/** The HTTP status a code is answered with. */
export const statusOf = (code: Code): number => CODE_TABLE[code].status;

/** The exit code the command line ends with for a code. */
export const exitOf = (code: Code): 1 | 2 | 3 => CODE_TABLE[code].exit;

/**
 * A blocker's kind as the planners name it, kebab-case as `kind` has always been, and the
 * code it carries: the same word in the list's spelling.
 */
export const BLOCKER_CODES = {
  'does-not-resolve': 'does_not_resolve',
  'needs-not-running': 'needs_not_running',
  'held-not-managed': 'held_not_managed',
  'secret-differs': 'secret_differs',
  link: 'link',
  'no-such-account': 'no_such_account',
  'account-stale': 'account_stale',
  'mint-not-a-secret': 'mint_not_a_secret',
  'mint-found': 'mint_found',
  'mint-kept': 'mint_kept',
  'mint-over-data': 'mint_over_data',
  'package-unavailable': 'package_unavailable',
  'no-package-manager': 'no_package_manager',
  'packages-not-here': 'packages_not_here',
  'package-refused': 'package_refused',
  'package-malformed': 'package_malformed',
  'value-missing': 'value_missing',
  'value-wrong-type': 'value_wrong_type',
  'value-undeclared': 'value_undeclared',
  'fact-unknown': 'fact_unknown',
  'not-a-key': 'not_a_key',
  'certificate-refused': 'certificate_refused',
  'certificate-name': 'certificate_name',
} as const satisfies Record<string, Code>;
export type BlockerKind = keyof typeof BLOCKER_CODES;

export const BlockerKindSchema = v.picklist(Object.keys(BLOCKER_CODES) as BlockerKind[]);
