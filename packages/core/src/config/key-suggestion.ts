/**
 * "Did you mean `Audiences`?" for a configuration key no schema entry matches: the known key
 * beside it (same parent) whose name is nearest by edit distance, when it is near enough to be a
 * slip (a missing or extra letter, a swap, a wrong plural) and not just another short word.
 */

/** Edit distance (Levenshtein, with a swap of neighbours counting as one edit), case-insensitive. */
export function editDistance (a: string, b: string): number {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  // rows[i][j]: the distance between the first i characters of s and the first j of t.
  const rows: number[][] = Array.from({ length: s.length + 1 }, (_, i) => Array.from({ length: t.length + 1 }, (_, j) => i === 0 ? j : j === 0 ? i : 0))
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const row = rows[i]!
      const above = rows[i - 1]!
      row[j] = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1)
    }
  }
  return rows[s.length]![t.length]!
}

/** The most edits a name of `length` characters may be from the key it was meant to be. */
function allowedEdits (length: number): number {
  return length <= 4 ? 1 : length <= 8 ? 2 : 3
}

/** The known name nearest to `name`, or undefined when none is near enough (ties: the first listed). */
export function nearestKey (name: string, known: readonly string[]): string | undefined {
  let best: { key: string, distance: number } | undefined
  for (const key of known) {
    const distance = editDistance(name, key)
    if (distance <= allowedEdits(Math.max(name.length, key.length)) && (best === undefined || distance < best.distance)) best = { key, distance }
  }
  return best?.key
}
