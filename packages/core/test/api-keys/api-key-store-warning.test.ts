/**
 * API keys kept in memory (the memory directory store: Node.js without node:sqlite, or
 * `State:Embedded:Persist` false) outside Development: one warning at startup naming the key to
 * change (`<Root>:Provisioning:Store:Provider`), as the embedded state and directory stores warn
 * when they cannot persist; none in Development.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { build } from '../helpers/app.js'

const SCHEMES = { Authentication: { Schemes: { Keys: { Type: 'ApiKey', Prefix: 'acme_', Scopes: { 'application.read': 'Read' } } } } }

test('outside Development, keys kept in memory are warned about once at startup, naming Provisioning:Store:Provider', async (context) => {
  const t = await build(context, { settings: SCHEMES as never })
  await t.app.ready()
  const warnings = t.logs.events('api_keys.store.not_persisted')
  assert.equal(warnings.length, 1)
  assert.equal(warnings[0]?.key, 'ProjectTemplate:Provisioning:Store:Provider')
  assert.equal(warnings[0]?.level, 40)
})

test('in Development, keys kept in memory are not warned about', async (context) => {
  const t = await build(context, { nodeEnv: 'Development', settings: { ...SCHEMES, Authentication: { ...SCHEMES.Authentication, Cookie: { AllowInsecureHttp: true } } } as never })
  await t.app.ready()
  assert.equal(t.logs.events('api_keys.store.not_persisted').length, 0)
})
