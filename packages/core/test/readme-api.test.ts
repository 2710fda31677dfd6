/**
 * The public API is documented where a user looks for it: every name the API report
 * (etc/core.api.md, pinned by npm run api:check) exports appears in a row of README.md's "Public
 * API" table, and each row says whether it is stable or experimental; every name of
 * etc/core-testing.api.md appears in the "Testing an app" table. A new export without a
 * line in the README, or a row without a status, fails here.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CORE_ROOT } from './helpers/app.js'
import { readmeRows, reportedNames } from './helpers/api-report.js'

const STATUSES = ['stable', 'experimental']

test('every exported name of the API report is in the README\'s Public API table, in rows of one status', () => {
  const names = reportedNames()
  assert.ok(names.length > 100, `the report lists ${names.length} names`)
  const rows = readmeRows()
  assert.ok(rows.length >= 10, `the table has ${rows.length} rows`)
  assert.deepEqual(rows.filter((row) => !STATUSES.includes(row.status)).map((row) => `${row.area}: ${row.status}`), [], 'each row is stable or experimental')
  assert.deepEqual(names.filter((name) => !rows.some((row) => row.names.has(name))), [], 'exported but not in README.md ("Public API")')
  const mixed = names.filter((name) => new Set(rows.filter((row) => row.names.has(name)).map((row) => row.status)).size > 1)
  assert.deepEqual(mixed, [], 'named in a stable and an experimental row')
})

test('every exported name of the testing report is in the README\'s "Testing an app" table', () => {
  const readme = readFileSync(join(CORE_ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('\n### Testing an app'), readme.indexOf('\n## Build and test'))
  const documented = new Set([...section.matchAll(/`([^`]+)`/g)].flatMap((match) => match[1]?.match(/[A-Za-z_$][\w$]*/g) ?? []))
  const names = reportedNames('core-testing.api.md')
  assert.ok(names.length > 20, `the report lists ${names.length} names`)
  assert.deepEqual(names.filter((name) => !documented.has(name)), [], 'exported by ./testing but not in README.md ("Testing an app")')
})

test('the README states what stable and experimental mean', () => {
  const readme = readFileSync(join(CORE_ROOT, 'README.md'), 'utf8')
  assert.match(readme, /- \*\*stable\*\*: covered by the versioning policy below; changed incompatibly only in a major\./)
  assert.match(readme, /- \*\*experimental\*\*: usable, tested and documented, but its shape may still change in a minor\n {2}release/)
})
