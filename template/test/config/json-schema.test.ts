/**
 * The JSON Schema file is generated from the one typed schema (never stale), appsettings files
 * reference it, and every key of the contract exists in it with the contract's default.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { toJsonSchema } from '@project-template/core'
import { APPLICATION_NAME } from '../../src/application-name.js'
import { APP_ROOT } from '../helpers/app.js'

interface Node { type?: string, default?: unknown, properties?: Record<string, Node>, additionalProperties?: unknown, 'x-secret'?: boolean }

const committed = JSON.parse(readFileSync(join(APP_ROOT, 'appsettings.schema.json'), 'utf8')) as Node

function nodeAt (path: string): Node | undefined {
  let node: Node | undefined = committed
  for (const segment of ['ProjectTemplate', ...path.split(':')]) node = node?.properties?.[segment]
  return node
}

// Contract "Resources and their fields": key (below ProjectTemplate), type, default.
const CONTRACT_KEYS: Array<[string, string, unknown]> = [
  ['Authorization:RequireAuthenticatedUserByDefault', 'boolean', true],
  ['Authorization:RoleClaimType', 'string', 'application:role'],
  ['Authorization:PermissionClaimType', 'string', 'application:permission'],
  ['Authorization:AdministratorRoles', 'array', ['Administrator']],
  ['Authorization:ManageApplicationPermissions', 'array', ['application.manage']],
  ['Authentication:Enabled', 'boolean', true],
  ['Authentication:DefaultScheme', 'string', 'Cookies'],
  ['Authentication:DefaultChallengeScheme', 'string', 'Cookies'],
  ['Authentication:DefaultSignInScheme', 'string', 'Cookies'],
  ['Authentication:Cookie:AllowInsecureHttp', 'boolean', false],
  ['Authentication:ClaimsTransformation:RemoveOriginalClaims', 'boolean', false],
  ...(['OpenIdConnect', 'Saml2', 'VendorA', 'VendorB', 'VendorC'] as const).flatMap((name): Array<[string, string, unknown]> => [
    [`Authentication:Providers:${name}:Enabled`, 'boolean', false],
    [`Authentication:Providers:${name}:Scheme`, 'string', name],
    [`Authentication:Providers:${name}:DisplayName`, 'string', ({ OpenIdConnect: 'OpenID Connect', Saml2: 'SAML2' } as Record<string, string>)[name] ?? name]
  ]),
  ['Authentication:Providers:OpenIdConnect:Authority', 'string', ''],
  ['Authentication:Providers:OpenIdConnect:ClientId', 'string', ''],
  ['Authentication:Providers:OpenIdConnect:ClientSecret', 'string', ''],
  ['Authentication:Providers:OpenIdConnect:CallbackPath', 'string', '/signin-oidc'],
  ['Authentication:Providers:OpenIdConnect:ResponseType', 'string', 'code'],
  ['Authentication:Providers:OpenIdConnect:SaveTokens', 'boolean', false],
  ['Authentication:Providers:OpenIdConnect:Scopes', 'array', ['openid', 'profile', 'email']],
  ['Authentication:Providers:Saml2:EntityId', 'string', ''],
  ['Authentication:Providers:Saml2:MetadataUrl', 'string', ''],
  ['Authentication:Providers:Saml2:ModulePath', 'string', '/Saml2/Acs'],
  ['Authentication:Providers:Saml2:LoadMetadata', 'boolean', true],
  ['Authentication:Providers:Saml2:RequireSignedAssertions', 'boolean', true],
  ['Authentication:Providers:Saml2:ValidateCertificates', 'boolean', true],
  ...([['VendorA', '/signin-vendora', []], ['VendorB', '/signin-vendorb', ['profile', 'email']], ['VendorC', '/signin-vendorc', ['profile', 'email']]] as const)
    .flatMap(([name, callback, scopes]): Array<[string, string, unknown]> => [
      [`Authentication:Providers:${name}:ClientId`, 'string', ''],
      [`Authentication:Providers:${name}:ClientSecret`, 'string', ''],
      [`Authentication:Providers:${name}:CallbackPath`, 'string', callback],
      [`Authentication:Providers:${name}:Scopes`, 'array', [...scopes]]
    ]),
  // Extension keys issue 2 names with their defaults.
  ['Authentication:Cookie:ExpireMinutes', 'integer', 60],
  ['Authentication:Cookie:SlidingExpiration', 'boolean', true]
]

describe('appsettings.schema.json', () => {
  test('equals the output of toJsonSchema() (run npm run schema when this fails)', () => {
    assert.deepEqual(committed, JSON.parse(JSON.stringify(toJsonSchema(APPLICATION_NAME))))
  })

  // appsettings.json only: the environment files are a developer's or a deployment's, which no test reads.
  test('appsettings.json references the schema through $schema', () => {
    const settings = JSON.parse(readFileSync(join(APP_ROOT, 'appsettings.json'), 'utf8')) as Record<string, unknown>
    assert.equal(settings.$schema, './appsettings.schema.json')
  })

  test('the Authentication and Authorization sections reject unknown properties (editors flag typos)', () => {
    for (const path of ['Authentication', 'Authorization', 'Authentication:Cookie', 'Authentication:Providers', 'Authentication:Providers:OpenIdConnect']) {
      assert.equal(nodeAt(path)?.additionalProperties, false, path)
    }
  })

  for (const [key, type, defaultValue] of CONTRACT_KEYS) {
    test(`ProjectTemplate:${key} is a ${type} with default ${JSON.stringify(defaultValue)}`, () => {
      const node = nodeAt(key)
      assert.ok(node !== undefined, `ProjectTemplate:${key} is missing from the schema`)
      assert.equal(node.type, type)
      assert.deepEqual(node.default, defaultValue)
    })
  }

  test('client secrets are marked secret', () => {
    for (const name of ['OpenIdConnect', 'VendorA', 'VendorB', 'VendorC']) {
      assert.equal(nodeAt(`Authentication:Providers:${name}:ClientSecret`)?.['x-secret'], true, name)
    }
  })
})
