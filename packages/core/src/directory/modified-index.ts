/**
 * The in-memory store's index on lastModified: entries sorted by (lastModified, sequence), so that
 * `meta.lastModified ge ...` reads only the entries in range (binary search to the first, then in
 * order). A change moves its entry; lastModified only grows, so it usually goes at the end.
 */
import type { Bound } from './query-plan.js'

interface Entry {
  readonly ms: number
  readonly seq: number
  readonly id: string
}

const before = (a: Entry, ms: number, seq: number): boolean => a.ms < ms || (a.ms === ms && a.seq < seq)

export class ModifiedIndex {
  readonly #entries: Entry[] = []

  get size (): number {
    return this.#entries.length
  }

  /** The position of the first entry not before (ms, seq). */
  #lowerBound (ms: number, seq: number): number {
    let low = 0
    let high = this.#entries.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (before(this.#entries[middle] as Entry, ms, seq)) low = middle + 1
      else high = middle
    }
    return low
  }

  add (ms: number, seq: number, id: string): void {
    const last = this.#entries.at(-1)
    if (last === undefined || before(last, ms, seq)) this.#entries.push({ ms, seq, id })
    else this.#entries.splice(this.#lowerBound(ms, seq), 0, { ms, seq, id })
  }

  remove (ms: number, seq: number): void {
    const index = this.#lowerBound(ms, seq)
    const entry = this.#entries[index]
    if (entry !== undefined && entry.ms === ms && entry.seq === seq) this.#entries.splice(index, 1)
  }

  /** The ids whose lastModified lies within the bounds, in lastModified order. */
  * range (from: Bound | undefined, to: Bound | undefined): Generator<string> {
    let index = from === undefined ? 0 : this.#lowerBound(from.inclusive ? from.ms : from.ms + 1, Number.NEGATIVE_INFINITY)
    for (; index < this.#entries.length; index++) {
      const entry = this.#entries[index] as Entry
      if (to !== undefined && (entry.ms > to.ms || (entry.ms === to.ms && !to.inclusive))) return
      yield entry.id
    }
  }
}
