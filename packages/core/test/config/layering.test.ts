/**
 * Configuration layers, later wins: appsettings.json -> appsettings.<Environment>.json -> user
 * secrets (Development only) -> key-per-file directory -> environment variables.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfiguration } from '../../src/configuration.js'
import { createContentRoot, settingsFile, type TempContentRoot } from '../helpers/content-root.js'

// One DisplayName per layer depth: the deepest layer that sets a key must win.
const providers = (names: Record<string, string>) => ({ Authentication: { Providers: Object.fromEntries(Object.entries(names).map(([name, value]) => [name, { DisplayName: value }])) } })

describe('configuration layering', () => {
  let content: TempContentRoot
  let keyPerFile: string

  before(() => {
    content = createContentRoot()
    content.writeJson('appsettings.json', settingsFile({
      ...providers({ OpenIdConnect: 'base', Saml2: 'base', VendorA: 'base', VendorB: 'base', VendorC: 'base' }),
      Authorization: { AdministratorRoles: ['BaseAdmin', 'BaseOwner', 'BaseRoot'] }
    }))
    content.writeJson('appsettings.Development.json', settingsFile({
      ...providers({ Saml2: 'development-file', VendorA: 'development-file', VendorB: 'development-file', VendorC: 'development-file' }),
      Authorization: { AdministratorRoles: ['DevAdmin', 'DevOwner'] }
    }))
    content.writeJson('appsettings.Production.json', settingsFile(providers({ Saml2: 'production-file', VendorA: 'production-file', VendorB: 'production-file', VendorC: 'production-file' })))
    content.writeUserSecrets(settingsFile(providers({ VendorA: 'user-secrets', VendorB: 'user-secrets', VendorC: 'user-secrets' })))
    keyPerFile = content.writeKeyPerFile({
      ProjectTemplate__Authentication__Providers__VendorB__DisplayName: 'key-per-file\n',
      ProjectTemplate__Authentication__Providers__VendorC__DisplayName: 'key-per-file'
    })
  })
  after(() => { content.remove() })

  const load = (nodeEnv: string | undefined, extra: Record<string, string> = {}) => loadConfiguration({
    contentRoot: content.root,
    env: {
      ...(nodeEnv === undefined ? {} : { NODE_ENV: nodeEnv }),
      XDG_CONFIG_HOME: content.configHome,
      ProjectTemplate__Secrets__KeyPerFileDirectory: keyPerFile,
      ProjectTemplate__Authentication__Providers__VendorC__DisplayName: 'environment',
      ...extra
    }
  })

  test('in Development each layer overrides the one before it', () => {
    const loaded = load('development')
    assert.deepEqual(loaded.errors, [])
    const p = loaded.config.Authentication.Providers
    assert.deepEqual(
      [p.OpenIdConnect.DisplayName, p.Saml2.DisplayName, p.VendorA.DisplayName, p.VendorB.DisplayName, p.VendorC.DisplayName],
      ['base', 'development-file', 'user-secrets', 'key-per-file', 'environment']
    )
    assert.deepEqual(loaded.sources, ['appsettings.json', 'appsettings.Development.json', 'user secrets', 'key-per-file directory', 'environment'])
  })

  test('outside Development the user-secrets file is not read and the environment file follows the environment name', () => {
    const loaded = load('production')
    const p = loaded.config.Authentication.Providers
    assert.equal(loaded.environmentName, 'Production')
    assert.equal(p.Saml2.DisplayName, 'production-file')
    assert.equal(p.VendorA.DisplayName, 'production-file', 'user secrets must not be read in Production')
    assert.equal(p.VendorB.DisplayName, 'key-per-file')
    assert.equal(p.VendorC.DisplayName, 'environment')
    assert.ok(!loaded.sources.includes('user secrets'))
  })

  test('a missing environment file is skipped (Staging has none)', () => {
    const loaded = load('staging')
    assert.deepEqual(loaded.errors, [])
    assert.equal(loaded.environmentName, 'Staging')
    assert.equal(loaded.config.Authentication.Providers.Saml2.DisplayName, 'base')
    assert.deepEqual(loaded.sources, ['appsettings.json', 'key-per-file directory', 'environment'])
  })

  test('a JSON array in a later file replaces the earlier array as a whole', () => {
    assert.deepEqual(load('development').config.Authorization.AdministratorRoles, ['DevAdmin', 'DevOwner'])
  })

  test('an environment variable replaces one array element by index and keeps the others', () => {
    const loaded = load('development', { ProjectTemplate__Authorization__AdministratorRoles__1: 'EnvOwner' })
    assert.deepEqual(loaded.config.Authorization.AdministratorRoles, ['DevAdmin', 'EnvOwner'])
  })

  test('the key-per-file directory may be named in appsettings.json (relative to the content root)', () => {
    content.writeJson('appsettings.Staging.json', settingsFile({ Secrets: { KeyPerFileDirectory: 'key-per-file' } }))
    try {
      const loaded = loadConfiguration({ contentRoot: content.root, env: { NODE_ENV: 'staging' } })
      assert.deepEqual(loaded.errors, [])
      assert.equal(loaded.config.Authentication.Providers.VendorB.DisplayName, 'key-per-file')
    } finally {
      content.writeJson('appsettings.Staging.json', '{}')
    }
  })

  test('a key-per-file directory that does not exist is a startup error naming the key', () => {
    const loaded = load('production', { ProjectTemplate__Secrets__KeyPerFileDirectory: `${keyPerFile}-missing` })
    assert.deepEqual(loaded.errors.map((e) => e.message), ['ProjectTemplate:Secrets:KeyPerFileDirectory is not a readable directory.'])
  })

  test('user secrets that are not valid JSON are reported without quoting their content', () => {
    const truncated = '{"ProjectTemplate": {"X": "PLANTED-USER-SECRET-91c2"'
    content.writeUserSecrets(truncated)
    try {
      const loaded = load('development')
      // The parser stops after the last character: one column past the end of line 1.
      assert.deepEqual(loaded.errors.map((e) => e.message), [`user secrets file is not valid JSON: unexpected end of file at line 1, column ${truncated.length + 1}.`])
      assert.ok(!JSON.stringify(loaded.errors).includes('PLANTED-USER-SECRET-91c2'))
    } finally {
      content.writeUserSecrets(settingsFile(providers({ VendorA: 'user-secrets', VendorB: 'user-secrets', VendorC: 'user-secrets' })))
    }
  })
})
