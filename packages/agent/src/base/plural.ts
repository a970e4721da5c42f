/** `n` and `word`, in the plural unless `n` is 1: "1 request", "2 requests", "1 tool call". */
export function counted(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}
