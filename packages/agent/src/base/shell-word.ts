/** A value as one POSIX shell word (single-quoted unless plainly safe), for a command line a user copies. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
