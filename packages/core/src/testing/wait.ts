/**
 * The one bounded wait of the test suite: polls a condition every `intervalMs` until it holds and
 * fails with what it waited for after `timeoutMs` (so after at most timeoutMs / intervalMs + 1
 * checks). Never a timing assertion: it waits for an outcome and lets the test assert on it.
 */
import { setTimeout as sleep } from 'node:timers/promises'

/** @public @experimental */
export async function waitFor (condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000, intervalMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (let check = 0; check <= Math.ceil(timeoutMs / intervalMs); check++) {
    if (await condition()) return
    if (Date.now() >= deadline) break
    await sleep(intervalMs)
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
}
