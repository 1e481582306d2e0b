/** The shells `berth completion` has a script for, and completes the name of. */
export const SHELLS = ['bash', 'zsh', 'fish'];
