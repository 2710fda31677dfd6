/**
 * docs/events.md names every log event the core emits, and nothing else (issue 34, item 8): the
 * events are read from the source (every `event: '<name>'`, every event name a line chooses
 * between, `event: cond ? 'a' : 'b'`, and every `*_EVENT = '<name>'` constant) and compared
 * with the first column of the document's tables.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CORE_ROOT } from '../helpers/app.js'

const EVENT_NAME = /'([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+)'/g

function sourceFiles (directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** Every event name the core's source logs. */
function emitted (): Set<string> {
  const names = new Set<string>()
  for (const file of sourceFiles(join(CORE_ROOT, 'src'))) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const at = line.search(/\bevent: /)
      const constant = /^\s*export const [A-Z_]*EVENT = /.test(line)
      if (at === -1 && !constant) continue
      // `event: 'a'` or `event: cond ? 'a' : 'b'`: the names up to the end of the property.
      const value = constant ? line : line.slice(at).split(/,\s*\w+:|\}/)[0] ?? ''
      for (const [, name] of value.matchAll(EVENT_NAME)) if (name !== undefined) names.add(name)
    }
  }
  return names
}

/** The event names of the document's tables (their first column). */
function documented (): string[] {
  const text = readFileSync(join(CORE_ROOT, 'docs', 'events.md'), 'utf8')
  return [...text.matchAll(/^\| `([a-z0-9_.]+)` \|/gm)].map((match) => match[1] ?? '')
}

test('the source is read: the events a reader meets first are found', () => {
  const names = emitted()
  for (const name of ['request.completed', 'external.sign_in.failed', 'saml2.logout.completed', 'saml2.logout.rejected', 'configuration.unknown_key']) {
    assert.ok(names.has(name), name)
  }
  assert.ok(names.size >= 80, `only ${names.size} events`)
})

test('every event the core emits is in docs/events.md', () => {
  const listed = new Set(documented())
  assert.deepEqual([...emitted()].filter((name) => !listed.has(name)).sort(), [])
})

test('docs/events.md names no event the core does not emit, and each once', () => {
  const names = emitted()
  const listed = documented()
  assert.deepEqual(listed.filter((name) => !names.has(name)), [])
  assert.deepEqual(listed.filter((name, index) => listed.indexOf(name) !== index), [])
})
