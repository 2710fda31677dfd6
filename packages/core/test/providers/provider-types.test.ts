/**
 * A provider type is its folder plus one entry in providers/provider-types.ts (issue 34, items 2
 * and 3): its schema, its rule and its opening all hang off that entry, and the application
 * schema, startup validation, runtime validation and the configuration reference are composed
 * from the list. Half of this test is the compiler (`npm run typecheck` covers test/): a
 * registration without its rule or its instances does not compile (the `@ts-expect-error` lines
 * below fail the typecheck if it ever does), and a protocol without its opening in
 * plugins/providers/open-provider.ts does not either. What the compiler cannot see (a type with no
 * schema at all, a schema that never reaches the composed configuration) is asserted here.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ProviderType } from '../../src/config/provider-type.js'
import type { SchemaNode } from '../../src/config/schema.js'
import { AuthenticationSchema, NAMED_SCHEMES } from '../../src/providers/application-schema.js'
import { renderKeyTable } from '../../src/providers/configuration-reference.js'
import { PROVIDER_NAMES, PROVIDER_TYPES, SCHEME_TYPES, type ProviderInstance, type ProviderProtocol } from '../../src/providers/provider-types.js'
import { validateRuntimeProvider } from '../../src/providers/runtime-definitions.js'
import { REGISTRATIONS } from '../../src/plugins/providers/open-provider.js'
import { loadTestConfiguration } from '../helpers/app.js'

const protocols = Object.keys(PROVIDER_TYPES) as ProviderProtocol[]
// Each entry's own types aside.
const registration = (protocol: ProviderProtocol): ProviderType<any, any, any> => PROVIDER_TYPES[protocol] as unknown as ProviderType<any, any, any>

// @ts-expect-error A registration without its rule does not compile.
export const withoutRule: ProviderType<ProviderInstance, Record<never, never>, never> = {
  protocol: 'OAuth', sections: {}, contractInstances: () => [], namedScheme: undefined, signsIn: true, endpointPaths: () => []
}

// @ts-expect-error A registration without its instances does not compile.
export const withoutInstances: ProviderType<ProviderInstance, Record<never, never>, never> = {
  protocol: 'OAuth', sections: {}, namedScheme: undefined, rule: () => [], signsIn: true, endpointPaths: () => []
}

// @ts-expect-error A protocol without its opening does not compile (the openings are keyed by every protocol).
export const withoutOpening: { readonly [P in ProviderProtocol | 'NewType']: unknown } = REGISTRATIONS

describe('provider types', () => {
  test('every registration is keyed by its protocol and has a schema, a rule and an opening', async () => {
    assert.deepEqual(protocols, ['OpenIdConnect', 'Saml2', 'OAuth', 'JwtBearer', 'ApiKey'])
    for (const protocol of protocols) {
      const type = registration(protocol)
      assert.equal(type.protocol, protocol)
      assert.ok(Object.keys(type.sections).length > 0 || type.namedScheme !== undefined, `${protocol}: no settings schema (neither a contract section nor a named scheme)`)
      assert.equal(typeof type.rule, 'function', protocol)
      assert.equal(typeof await REGISTRATIONS[protocol](), 'function', `${protocol}: no opening`)
    }
    assert.deepEqual(Object.keys(REGISTRATIONS).sort(), [...protocols].sort())
  })

  test('the application schema is composed from the registrations', () => {
    const sections = protocols.flatMap((protocol) => Object.keys(registration(protocol).sections))
    assert.deepEqual(Object.keys(AuthenticationSchema.properties.Providers.properties), sections)
    assert.deepEqual([...PROVIDER_NAMES], sections)
    const named = protocols.filter((protocol) => registration(protocol).namedScheme !== undefined)
    assert.deepEqual([...SCHEME_TYPES], named)
    assert.deepEqual(NAMED_SCHEMES.typeNames, named)
    const schemes = AuthenticationSchema.properties.Schemes as unknown as { additionalProperties: { oneOf: SchemaNode[] } }
    assert.deepEqual(schemes.additionalProperties.oneOf, named.map((protocol) => registration(protocol).namedScheme?.schema))
  })

  test('startup validation runs each named scheme type\'s rule, naming the scheme\'s keys', () => {
    for (const type of SCHEME_TYPES) {
      const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Schemes: { Checked: { Type: type } } } } })
      const own = loaded.errors.filter((problem) => problem.key.startsWith('ProjectTemplate:Authentication:Schemes:Checked:'))
      assert.ok(own.length > 0, `${type}: its rule did not run (${JSON.stringify(loaded.errors.map((problem) => problem.key))})`)
    }
  })

  test('runtime validation runs the same rule on one definition (an ApiKey scheme is never a provider-source definition)', () => {
    const { config } = loadTestConfiguration()
    for (const type of SCHEME_TYPES.filter((protocol) => protocol !== 'ApiKey')) {
      const startup = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Schemes: { Checked: { Type: type } } } } })
      const result = validateRuntimeProvider({ scheme: 'Checked', settings: { Type: type } }, { config, environmentName: 'Production' })
      assert.equal(result.ok, false, type)
      if (result.ok) continue
      const keys = (problems: ReadonlyArray<{ readonly key: string }>): string[] => problems.map((problem) => problem.key).filter((key) => key.startsWith('ProjectTemplate:Authentication:Schemes:Checked:')).sort()
      assert.deepEqual(keys(result.problems), keys(startup.errors), type)
    }
  })

  test('the configuration reference lists every section\'s keys', () => {
    const table = renderKeyTable('ProjectTemplate')
    for (const name of PROVIDER_NAMES) {
      const section = (AuthenticationSchema.properties.Providers.properties as Record<string, SchemaNode>)[name]
      for (const key of Object.keys(section?.properties ?? {})) assert.ok(table.includes(`| \`Authentication:Providers:${name}:${key}\``), `${name}:${key}`)
    }
    for (const type of SCHEME_TYPES.filter((protocol) => Object.keys(registration(protocol).sections).length === 0)) {
      const keys = Object.keys((registration(type).namedScheme?.schema as SchemaNode).properties ?? {}).filter((key) => !['Type', 'Enabled', 'Scheme', 'DisplayName'].includes(key))
      // A key that is a section (Introspection) is listed by its leaves: <Name>:Introspection:ClientId.
      for (const key of keys) assert.ok(table.includes(`| \`Authentication:Schemes:<Name>:${key}\``) || table.includes(`| \`Authentication:Schemes:<Name>:${key}:`), `${type}:${key}`)
    }
  })
})
