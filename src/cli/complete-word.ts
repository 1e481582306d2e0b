/** The word a shell's completion script calls berth with at each Tab: no command a person types. */
export const COMPLETE = '__complete';
