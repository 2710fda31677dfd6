/**
 * The ApiKey scheme type as configuration meets it (issue 42, item 1): `Authentication:Schemes:<Name>`
 * with `Type: ApiKey` is accepted; a prefix that equals or starts another ApiKey scheme's, or an
 * introspecting JwtBearer scheme's TokenPrefix, is refused naming the key; a definition from the
 * provider source may not be of Type ApiKey.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { validateRuntimeProvider } from '../../src/providers/runtime-definitions.js'
import { enabledProviderInstances } from '../../src/providers/provider-instances.js'
import { loadTestConfiguration } from '../helpers/app.js'

const ORIGIN = { Hosting: { PublicOrigin: 'https://app.example.test' } }
const SCHEMES = 'ProjectTemplate:Authentication:Schemes'
const keys = (extra: Record<string, unknown> = {}) => ({ Type: 'ApiKey', Scopes: { 'orders.read': 'Read your orders' }, ...extra })
const load = (schemes: Record<string, unknown>) => loadTestConfiguration({ settings: { ...ORIGIN, Authentication: { Schemes: schemes } } as never })

describe('Authentication:Schemes:<Name> of Type ApiKey', () => {
  test('is accepted, with the prefix derived from the application name', () => {
    const loaded = load({ Keys: keys() })
    assert.deepEqual(loaded.errors, [])
    const instance = enabledProviderInstances(loaded.config).find((candidate) => candidate.scheme === 'Keys')
    assert.equal(instance?.protocol, 'ApiKey')
    assert.equal((instance?.settings as { Prefix: string }).Prefix, 'projecttemplate_')
  })

  test('two ApiKey schemes whose prefixes overlap are refused, naming the key', () => {
    const messages = load({ Keys: keys({ Prefix: 'acme_' }), More: keys({ Prefix: 'acme_' }) }).errors.map((problem) => problem.key)
    assert.ok(messages.includes(`${SCHEMES}:Keys:Prefix`), messages.join('\n'))
  })

  test('a prefix overlapping an introspecting JwtBearer scheme\'s TokenPrefix is refused', () => {
    const loaded = load({
      Keys: keys({ Prefix: 'acme_' }),
      Api: { Type: 'JwtBearer', Authority: 'https://issuer.example.test', Audiences: ['api'], Introspection: { Enabled: true, ClientId: 'rs', ClientSecret: 'introspection-secret-PLANTED', TokenPrefix: 'acme_at_' } }
    })
    const problem = loaded.errors.find((candidate) => candidate.key === `${SCHEMES}:Keys:Prefix`)
    assert.ok(problem !== undefined, loaded.errors.map((candidate) => `${candidate.key}: ${candidate.message}`).join('\n'))
    assert.match(problem.message, /Introspection:TokenPrefix/)
    assert.doesNotMatch(JSON.stringify(loaded.errors), /PLANTED|acme_at_/)
  })

  test('a provider-source definition of Type ApiKey is refused', () => {
    const { config } = loadTestConfiguration()
    const result = validateRuntimeProvider({ scheme: 'Keys', settings: keys() }, { config, environmentName: 'Production', rootKey: 'Acme' })
    assert.equal(result.ok, false)
    if (result.ok) return
    assert.deepEqual(result.problems.map((problem) => problem.key), ['Acme:Authentication:Schemes:Keys:Type'])
  })
})
