/**
 * Provider names are written once (the registrations of src/providers/provider-types.ts, VENDOR_NAMES in src/oauth/settings-schema.ts): each
 * provider has a configuration section, required-key startup rules, a registration and, for a
 * vendor slot, a handler slot. A name added to the list but missed by any of them fails here
 * (test/config/rules.test.ts checks each vendor's required keys one by one).
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { AuthenticationSchema } from '../../src/providers/application-schema.js'
import { PROVIDER_NAMES, SCHEME_TYPES } from '../../src/providers/provider-types.js'
import { VENDOR_NAMES } from '../../src/oauth/settings-schema.js'
import { REGISTRATIONS } from '../../src/plugins/providers/open-provider.js'
import { VENDOR_SLOTS } from '../../src/plugins/providers/oauth-vendors.js'
import { providerInstancesOf, type ProviderProtocol } from '../../src/providers/provider-instances.js'
import { loadTestConfiguration } from '../helpers/app.js'

const PROVIDERS = 'ProjectTemplate:Authentication:Providers'

describe('provider names', () => {
  test('the vendor slots are providers, and every provider has a configuration section', () => {
    assert.ok(VENDOR_NAMES.every((name) => (PROVIDER_NAMES as readonly string[]).includes(name)))
    assert.deepEqual(Object.keys(AuthenticationSchema.properties.Providers.properties), [...PROVIDER_NAMES])
  })

  test('every provider enabled with nothing else configured is refused at startup, naming its own keys', () => {
    for (const name of PROVIDER_NAMES) {
      const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Providers: { [name]: { Enabled: true } } } } })
      const required = loaded.errors.filter((problem) => problem.key.startsWith(`${PROVIDERS}:${name}:`) && problem.message.endsWith('is required when the provider is enabled.'))
      assert.ok(required.length > 0, `${name}: no required-key problem in ${JSON.stringify(loaded.errors.map((problem) => problem.key))}`)
    }
  })

  test('every provider and named scheme type has a registration of its protocol, and every vendor slot a handler slot', async () => {
    const { config } = loadTestConfiguration()
    // The contract sections' protocols, and the types only a named scheme has (JwtBearer).
    const protocols = new Set<ProviderProtocol>([...providerInstancesOf(config).map((instance) => instance.protocol), ...SCHEME_TYPES])
    assert.deepEqual(providerInstancesOf(config).map((instance) => instance.scheme), [...PROVIDER_NAMES])
    assert.deepEqual(Object.keys(REGISTRATIONS).sort(), [...protocols].sort())
    for (const protocol of protocols) assert.equal(typeof await REGISTRATIONS[protocol](), 'function', protocol)
    assert.deepEqual(Object.keys(VENDOR_SLOTS).sort(), [...VENDOR_NAMES].sort())
  })

  test('the default callback paths are distinct', () => {
    const { config } = loadTestConfiguration()
    const paths = VENDOR_NAMES.map((name) => config.Authentication.Providers[name].CallbackPath.toLowerCase())
    assert.equal(new Set(paths).size, VENDOR_NAMES.length)
  })
})
