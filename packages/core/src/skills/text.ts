/**
 * Term processing shared by the keyword index and the close-name suggestions: English stop words and a light
 * suffix stemmer, so "merging PDFs" finds "merge pdf". Deliberately small (no Porter): predictable, and fast.
 */

// Words that would match nearly every skill and only add noise (prefix search on "a" would match everything).
const STOP_WORDS = new Set(
  (
    "a an and any are as at be been but by can could do does for from has have how i if in into is it its me my " +
    "need of on or our some that the their them then there these this those to use using want was we what when " +
    "where which while who why will with would you your please help let lets get make"
  ).split(" "),
);

/** Lowercase word → its stem, or undefined for a stop word. */
export function stemTerm(term: string): string | undefined {
  const word = term.toLowerCase();
  if (STOP_WORDS.has(word)) return undefined;
  return stem(word);
}

/** Strips common English inflections: plural s/es/ies, -ing, -ed, a final e ("merge", "merges", "merging" → "merg"). */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || !/^[a-z]+$/.test(w)) return w;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith("ing") && w.length > 5) w = undouble(w.slice(0, -3));
  else if (w.endsWith("ed") && w.length > 4) w = undouble(w.slice(0, -2));
  if (w.endsWith("e") && w.length > 3) w = w.slice(0, -1);
  return w;
}

/** "runn" → "run", "stopp" → "stop"; keeps "ll", "ss" and "zz" ("install", "process", "buzz"). */
function undouble(w: string): string {
  const last = w[w.length - 1];
  if (
    w.length > 3 &&
    last === w[w.length - 2] &&
    last !== undefined &&
    !"lsz".includes(last) &&
    /[b-df-hj-np-tv-z]/.test(last)
  ) {
    return w.slice(0, -1);
  }
  return w;
}

/** Levenshtein edit distance (for "did you mean" suggestions on short names). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
