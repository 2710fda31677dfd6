/**
 * ClaimMappings in every configuration source: the array of { From, To } objects that
 * environment variables and key-per-file names can express (claim URIs contain `:` and `/`), the
 * JSON object form kept working, both forms layered, and errors that name the key, never the
 * value. The Entra ID groups URI is in the default table.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { normalizeClaims } from '../../src/sign-in/claims-normalization.js'
import { loadConfiguration } from '../../src/configuration.js'
import { createContentRoot, settingsFile, type TempContentRoot } from '../helpers/content-root.js'

const GROUPS_URI = 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups'
const SAML = 'ProjectTemplate__Authentication__Providers__Saml2__ClaimMappings'

describe('ClaimMappings binding', () => {
  let content: TempContentRoot
  before(() => {
    content = createContentRoot()
    content.writeJson('appsettings.json', settingsFile({
      Authentication: {
        Providers: {
          Saml2: { ClaimMappings: { 'urn:oid:2.5.4.42': 'name', Department: 'role' } },
          VendorA: { ClaimMappings: [{ From: 'data.id', To: 'subject' }, { From: '/data/attributes/name', To: 'name' }] }
        }
      }
    }))
  })
  after(() => { content.remove() })

  const load = (env: Record<string, string> = {}) => loadConfiguration({ contentRoot: content.root, env: { XDG_CONFIG_HOME: content.configHome, ...env } })

  test('the JSON object form and the JSON array form both bind to one map', () => {
    const loaded = load()
    assert.deepEqual(loaded.errors, [])
    assert.deepEqual(loaded.config.Authentication.Providers.Saml2.ClaimMappings, { 'urn:oid:2.5.4.42': 'name', Department: 'role' })
    assert.deepEqual(loaded.config.Authentication.Providers.VendorA.ClaimMappings, { 'data.id': 'subject', '/data/attributes/name': 'name' })
    assert.deepEqual(loaded.warnings, [])
  })

  test('environment variables add URI mappings by index (__0__From / __0__To) over the file', () => {
    const loaded = load({
      [`${SAML}__0__From`]: 'http://schemas.microsoft.com/identity/claims/objectidentifier',
      [`${SAML}__0__To`]: 'subject',
      [`${SAML}__1__from`]: 'Department',
      [`${SAML}__1__TO`]: ''
    })
    assert.deepEqual(loaded.errors, [])
    assert.deepEqual(loaded.config.Authentication.Providers.Saml2.ClaimMappings, {
      'urn:oid:2.5.4.42': 'name',
      Department: '',
      'http://schemas.microsoft.com/identity/claims/objectidentifier': 'subject'
    })
  })

  test('a key-per-file directory can express a URI mapping too', () => {
    const directory = content.writeKeyPerFile({ [`${SAML}__0__From`]: 'urn:oid:1.3.6.1.4.1.5923.1.1.1.1\n', [`${SAML}__0__To`]: 'role\n' })
    const loaded = load({ ProjectTemplate__Secrets__KeyPerFileDirectory: directory })
    assert.deepEqual(loaded.errors, [])
    assert.equal(loaded.config.Authentication.Providers.Saml2.ClaimMappings['urn:oid:1.3.6.1.4.1.5923.1.1.1.1'], 'role')
  })

  test('an entry without From, a member other than From/To, and a scalar are errors naming the key, never the value', () => {
    const loaded = load({
      [`${SAML}__0__To`]: 'role-PLANTED',
      [`${SAML}__1__Value`]: 'value-PLANTED',
      ProjectTemplate__Authentication__Providers__VendorB__ClaimMappings: 'scalar-PLANTED'
    })
    const path = 'ProjectTemplate:Authentication:Providers'
    assert.deepEqual(loaded.errors.map((error) => error.key).sort(), [
      `${path}:Saml2:ClaimMappings:0:From`,
      `${path}:Saml2:ClaimMappings:1:Value`,
      `${path}:VendorB:ClaimMappings`
    ].sort())
    assert.ok(!JSON.stringify(loaded.errors).includes('PLANTED'))
  })
})

test("Entra ID's groups claim URI maps to application:group by default", () => {
  const claims = normalizeClaims([
    { type: 'NameID', value: 'user-1', issuer: 'entra' },
    { type: GROUPS_URI, value: '5f1c0f3e-0000-4000-8000-000000000001', issuer: 'entra' }
  ], { enabled: true, removeOriginalClaims: true })
  assert.deepEqual(claims, [
    { type: 'application:subject', value: 'user-1', issuer: 'entra' },
    { type: 'application:group', value: '5f1c0f3e-0000-4000-8000-000000000001', issuer: 'entra' }
  ])
})

test('scope and scp are not permissions by default (issue 40, item 2); only an explicit entry maps them, and nothing maps to application:scope', () => {
  const provided = [
    { type: 'sub', value: 'eve', issuer: 'idp' },
    { type: 'scope', value: 'application.manage orders.read', issuer: 'idp' },
    { type: 'scp', value: 'application.manage', issuer: 'idp' },
    { type: 'application:scope', value: 'forged', issuer: 'idp' }
  ]
  assert.deepEqual(normalizeClaims(provided, { enabled: true, removeOriginalClaims: true }), [
    { type: 'application:subject', value: 'eve', issuer: 'idp' }
  ])
  assert.deepEqual(normalizeClaims(provided, { enabled: true, removeOriginalClaims: true, overrides: { scp: 'permission', scope: 'application:permission' } }), [
    { type: 'application:subject', value: 'eve', issuer: 'idp' },
    { type: 'application:permission', value: 'application.manage', issuer: 'idp' },
    { type: 'application:permission', value: 'orders.read', issuer: 'idp' }
  ], 'an explicit entry splits the space-separated values, as the old default did')
  assert.deepEqual(normalizeClaims(provided, { enabled: true, removeOriginalClaims: true, overrides: { scope: 'application:scope', scp: 'scope' } }), [
    { type: 'application:subject', value: 'eve', issuer: 'idp' }
  ], 'only a verified access token asserts application:scope')
})
