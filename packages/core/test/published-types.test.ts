/**
 * Every type an app's code meets is in the published types (issue 40, item 9): the packed core's
 * `dist/index.d.ts` keeps exactly the modules src/index.ts names (its `export ... from` and its
 * side-effect imports), so every module that augments Fastify (`request.bearer`, a route config's
 * `bearer`, `app.state`...) must be named there, or an app's route code that compiles in this
 * repository (where every source is in the program) does not compile in a generated app. The
 * generator's end-to-end test typechecks the guides' TypeScript inside a generated app for real.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { CORE_ROOT } from './helpers/app.js'

const SOURCE = join(CORE_ROOT, 'src')

/** Every .ts file below `directory`, relative to src/ (`plugins/bearer.ts`). */
function sources (directory = SOURCE): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : sources(path)
    return entry.name.endsWith('.ts') ? [relative(SOURCE, path)] : []
  })
}

/** The modules src/index.ts names by a side-effect import or an `export ... from`, relative to src/. */
function namedByIndex (): Set<string> {
  const index = readFileSync(join(SOURCE, 'index.ts'), 'utf8')
  const named = [...index.matchAll(/^(?:import '\.\/([^']+)'|export (?:type )?\{[^}]*\} from '\.\/([^']+)')$/gm)]
  return new Set(named.map((match) => (match[1] ?? match[2] ?? '').replace(/\.js$/, '.ts')))
}

test('every module that augments Fastify is named by src/index.ts, so the published index.d.ts carries its augmentation', () => {
  const augmenting = sources().filter((file) => /^declare module 'fastify' \{/m.test(readFileSync(join(SOURCE, file), 'utf8'))).sort()
  assert.ok(augmenting.includes('plugins/bearer.ts') && augmenting.length >= 10, `found ${augmenting.join(', ')}`)
  const named = namedByIndex()
  assert.ok(named.has('create-app.ts'), 'the index was read')
  assert.deepEqual(augmenting.filter((file) => !named.has(file)), [])
})
