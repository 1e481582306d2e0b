/** The word the completion scripts (completion/) call berth with at each Tab: no command a person types. */
export const COMPLETE = '__complete';
