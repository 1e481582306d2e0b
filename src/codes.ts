import * as v from 'valibot';

/**
 * Every code a refusal or a blocker carries, in one closed list: scripts and the view
 * match these, never the words beside them. docs/codes.md says when each is given and
 * what to do; a code is added here and there together, and never changes meaning.
 */
export const CODES = [
  // The request, before any node.
  'usage',
  'fields_missing',
  'invalid_request',
  'unauthorized',
  'no_route',
  'body_too_large',
  'headers_too_large',
  'request_timeout',
  'shutting_down',
  'stores_unavailable',
  'store_not_empty',
  'invalid_config',
  'invalid_plan',
  'invalid_name',
  'invalid_target',
  'unknown_node',
  'unknown_group',
  'not_granted',
  // A command's own refusals.
  'unknown_module',
  'invalid_module',
  'not_assigned',
  'already_managed',
  'not_managed',
  'still_assigned',
  'declared_in_config',
  'still_needed',
  'not_adopted',
  'not_in_account',
  'secret_unreadable',
  'secret_not_kept',
  'vault_unopened',
  'refresh_not_on_act',
  'rotate_unknown',
  'rotate_not_a_key',
  // The gate between a preview and its act.
  'digest_needed',
  'digest_stale',
  'invalid_digest',
  'blocked',
  'plan_edited',
  'plan_elsewhere',
  'plan_acted_on',
  // An act that began.
  'lock_timeout',
  'unreachable',
  'interrupted',
  'hook_failed',
  'hook_timeout',
  'package_failed',
  'step_failed',
  'refresh_failed',
  'failed',
  'journal_failed',
  'not_begun',
  'nodes_refused',
  // Blockers: what stands in the way of a node's act.
  'does_not_resolve',
  'needs_not_running',
  'held_not_managed',
  'secret_differs',
  'link',
  'no_such_account',
  'account_stale',
  'mint_not_a_secret',
  'mint_found',
  'mint_kept',
  'mint_over_data',
  'package_unavailable',
  'no_package_manager',
  'packages_not_here',
  'package_refused',
  'value_missing',
  'value_wrong_type',
  'value_undeclared',
  'fact_unknown',
  'not_a_key',
  'certificate_refused',
  'certificate_name',
] as const;

export const CodeSchema = v.pipe(
  v.picklist(CODES),
  v.description('Why, as a code from the closed list in docs/codes.md'),
);
export type Code = v.InferOutput<typeof CodeSchema>;

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
