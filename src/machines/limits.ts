// The limits and paths both machine kinds keep: the rooted machine (rooted-machine.ts and
// its walk in fs/) here, the ssh machine's sh on the far side (ssh-scripts.ts passes them
// to it as data). One definition, so that both answer a path alike.

/**
 * Linux's PATH_MAX, in bytes with the terminating NUL: a path of this many bytes or more is
 * refused by every call that takes one, so a survey answers it as too long.
 */
export const PATH_MAX = 4096;

/** Linux's NAME_MAX: the longest name in a directory, in bytes. */
export const NAME_MAX = 255;

/** Linux's own limit on links followed in one lookup (MAXSYMLINKS). */
export const MOST_LINKS = 40;

/** The largest file whose bytes a survey brings back: berth's files are configuration. */
export const READ_LIMIT = 4 * 1024 * 1024;

/** The PATH a hook runs with, whatever the login's: the system's own directories. */
export const HOOK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
