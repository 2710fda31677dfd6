/**
 * Named schemes (Authentication:Schemes:<Name>) at startup: bound from environment variables
 * (`ProjectTemplate__Authentication__Schemes__<Name>__<Key>`) with the protocol's keys and the
 * defaults that follow from the name; an unknown or missing Type, a reserved name, a missing
 * required key, two providers on one path and a domain claimed twice are refused with the key
 * named and no secret shown.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfiguration } from '../../src/configuration.js'
import { isSecretKey } from '../../src/providers/application-schema.js'
import { enabledProviderInstances, sectionKeyOf } from '../../src/providers/provider-instances.js'
import { formatSummary, summarizeConfiguration } from '../../src/configuration-summary.js'
import { ROOT_KEY } from '../../src/config/schema.js'
import { APP_ROOT, loadTestConfiguration } from '../helpers/app.js'

const SCHEMES = 'ProjectTemplate:Authentication:Schemes'
const ORIGIN = { Hosting: { PublicOrigin: 'https://app.example.test' } }
const SECRET = 'named-scheme-secret-PLANTED-93'

const oidc = (extra: Record<string, unknown> = {}) => ({ Type: 'OpenIdConnect', Authority: 'https://login.example.test/tenant', ClientId: 'client', ClientSecret: SECRET, ...extra })
const saml = (extra: Record<string, unknown> = {}) => ({ Type: 'Saml2', EntityId: 'https://app.example.test/sp', MetadataUrl: 'https://idp.example.test/metadata', ...extra })

function load (schemes: Record<string, unknown>, providers: Record<string, unknown> = {}) {
  return loadTestConfiguration({ settings: { ...ORIGIN, Authentication: { Providers: providers, Schemes: schemes } } as never })
}

describe('Authentication:Schemes', () => {
  test('environment variables bind a named scheme: Type case-insensitive, Enabled true, Scheme, DisplayName and paths from the name', () => {
    const loaded = loadConfiguration({
      contentRoot: APP_ROOT,
      env: {
        NODE_ENV: 'production',
        ProjectTemplate__State__Embedded__Persist: 'false',
        ProjectTemplate__Hosting__PublicOrigin: 'https://app.example.test',
        ProjectTemplate__Authentication__Schemes__Partners__Type: 'openidconnect',
        ProjectTemplate__Authentication__Schemes__Partners__Authority: 'https://login.example.test/tenant',
        ProjectTemplate__Authentication__Schemes__Partners__ClientId: 'client',
        ProjectTemplate__Authentication__Schemes__Partners__ClientSecret: SECRET,
        ProjectTemplate__Authentication__Schemes__Partners__Domains__0: 'partner.example',
        ProjectTemplate__Authentication__Schemes__Acme__Type: 'Saml2',
        ProjectTemplate__Authentication__Schemes__Acme__EntityId: 'https://app.example.test/sp-acme',
        ProjectTemplate__Authentication__Schemes__Acme__MetadataUrl: 'https://idp.example.test/metadata',
        ProjectTemplate__Authentication__Schemes__Acme__ModulePath: '/sso/acme'
      }
    })
    assert.deepEqual(loaded.errors, [])
    assert.deepEqual(loaded.warnings.filter((warning) => warning.event === 'configuration.unknown_key'), [])
    const partners = loaded.config.Authentication.Schemes.Partners
    assert.ok(partners !== undefined && partners.Type === 'OpenIdConnect')
    assert.equal(partners.Enabled, true)
    assert.equal(partners.Scheme, 'Partners')
    assert.equal(partners.DisplayName, 'Partners')
    assert.deepEqual([partners.CallbackPath, partners.SignedOutCallbackPath, partners.BackChannelLogoutPath], ['/signin-partners', '/signout-callback-partners', '/backchannel-logout-partners'])
    assert.deepEqual(partners.Domains, ['partner.example'])
    assert.equal(partners.ClientSecret.reveal(), SECRET)
    assert.equal(JSON.stringify(loaded.config).includes(SECRET), false, 'the secret is wrapped')
    const acme = loaded.config.Authentication.Schemes.Acme
    assert.ok(acme !== undefined && acme.Type === 'Saml2')
    assert.deepEqual([acme.ModulePath, acme.MetadataPath, acme.LogoutPath], ['/sso/acme', '/Saml2/Acme/Metadata', '/Saml2/Acme/Logout'])
    assert.deepEqual(enabledProviderInstances(loaded.config).map((instance) => [instance.scheme, instance.protocol, instance.keyPrefix]), [
      ['Partners', 'OpenIdConnect', `${SCHEMES}:Partners`],
      ['Acme', 'Saml2', `${SCHEMES}:Acme`]
    ])
    assert.deepEqual(loaded.secretOrigins.map((origin) => origin.key), [`${SCHEMES}:Partners:ClientSecret`])
    assert.equal(isSecretKey('projecttemplate:authentication:schemes:acme:signingkey', 'ProjectTemplate'), true)
    assert.equal(isSecretKey('projecttemplate:authentication:schemes:acme:entityid', 'ProjectTemplate'), false)
  })

  test('check-config lists named schemes beside the contract providers and never shows their secrets', () => {
    const loaded = load({ Partners: oidc({ DisplayName: 'Partner sign-in' }) }, { Saml2: { Enabled: true, EntityId: 'https://app.example.test/sp', MetadataUrl: 'https://idp.example.test/metadata' } })
    assert.deepEqual(loaded.errors, [])
    const summary = summarizeConfiguration(loaded)
    assert.deepEqual(summary.providers, [{ name: 'Saml2', displayName: 'SAML2' }, { name: 'Partners', displayName: 'Partner sign-in' }])
    assert.deepEqual(summary.secrets.map((secret) => secret.key), [`${SCHEMES}:Partners:ClientSecret`])
    const text = formatSummary(summary, ROOT_KEY)
    assert.match(text, /Providers: {5}SAML2 \(Saml2\), Partner sign-in \(Partners\)/)
    assert.equal(text.includes(SECRET), false)
  })

  test('log lines name a setting in the section of the scheme that signed in', () => {
    assert.equal(sectionKeyOf('Saml2', 'ProjectTemplate'), 'ProjectTemplate:Authentication:Providers:Saml2')
    assert.equal(sectionKeyOf('VendorB', 'AcmePortal'), 'AcmePortal:Authentication:Providers:VendorB')
    assert.equal(sectionKeyOf('Partners', 'ProjectTemplate'), `${SCHEMES}:Partners`)
  })

  test('a missing or unknown Type is refused, naming the Type key', () => {
    assert.deepEqual(load({ Partners: { Authority: 'https://login.example.test' } }).errors, [
      { key: `${SCHEMES}:Partners:Type`, message: `${SCHEMES}:Partners:Type is required: OpenIdConnect or Saml2.` }
    ])
    assert.deepEqual(load({ Partners: oidc({ Type: 'Ldap' }) }).errors, [
      { key: `${SCHEMES}:Partners:Type`, message: `${SCHEMES}:Partners:Type must be one of: OpenIdConnect, Saml2.` }
    ])
  })

  test('reserved and unusable names are refused', () => {
    for (const name of ['Cookies', 'openidconnect', 'Saml2', 'VendorA', 'VendorB', 'VendorC']) {
      const { errors } = load({ [name]: oidc() })
      assert.equal(errors.length, 1, name)
      assert.equal(errors[0]?.key, `${SCHEMES}:${name}`)
      assert.match(errors[0]?.message ?? '', /uses the reserved scheme name/)
    }
    const { errors } = load({ '9lives': oidc() })
    assert.equal(errors[0]?.key, `${SCHEMES}:9lives`)
    assert.match(errors[0]?.message ?? '', /is not a usable scheme name/)
  })

  test('a missing required key is refused with the scheme\'s own key; no secret in any message', () => {
    const { errors } = load({ Partners: oidc({ ClientId: '' }), Acme: saml({ EntityId: '' }) })
    assert.deepEqual(errors.map((problem) => problem.key), [`${SCHEMES}:Partners:ClientId`, `${SCHEMES}:Acme:EntityId`])
    assert.equal(errors[0]?.message, `${SCHEMES}:Partners:ClientId is required when the provider is enabled.`)
    assert.equal(JSON.stringify(errors).includes(SECRET), false)
    // The protocol's own rules apply to a named scheme too.
    assert.deepEqual(load({ Partners: oidc({ Scopes: ['profile'] }) }).errors.map((problem) => problem.key), [`${SCHEMES}:Partners:Scopes`])
  })

  test('two providers on one path: a startup error naming both keys', () => {
    const { errors } = load({ Partners: oidc({ CallbackPath: '/signin-oidc' }) }, { OpenIdConnect: { Enabled: true, Authority: 'https://a.example.test', ClientId: 'a', ClientSecret: 'a-secret' } })
    assert.deepEqual(errors, [{
      key: `${SCHEMES}:Partners:CallbackPath`,
      message: `${SCHEMES}:Partners:CallbackPath collides with ProjectTemplate:Authentication:Providers:OpenIdConnect:CallbackPath.`
    }])
    const samlClash = load({ Acme: saml(), Beta: saml({ EntityId: 'https://app.example.test/sp-beta', MetadataPath: '/Saml2/Acme/Metadata' }) }).errors
    assert.deepEqual(samlClash.map((problem) => problem.message), [`${SCHEMES}:Beta:MetadataPath collides with ${SCHEMES}:Acme:MetadataPath.`])
    // Different names, different default paths: no clash.
    assert.deepEqual(load({ Acme: saml(), Beta: saml({ EntityId: 'https://app.example.test/sp-beta' }), Partners: oidc(), Staff: oidc() }).errors, [])
  })

  test('Domains: a domain name, owned by one provider', () => {
    const { errors } = load({ Partners: oidc({ Domains: ['partner.example', 'https://x.example'] }), Staff: oidc({ Domains: ['PARTNER.example'] }) })
    assert.deepEqual(errors.map((problem) => problem.key), [`${SCHEMES}:Partners:Domains:1`, `${SCHEMES}:Staff:Domains:0`])
    assert.match(errors[1]?.message ?? '', /names a domain that .*Partners:Domains:0 names already/)
  })

  test('a named scheme may be the default challenge scheme; a disabled one may not', () => {
    assert.deepEqual(loadTestConfiguration({ settings: { ...ORIGIN, Authentication: { DefaultChallengeScheme: 'Partners', Schemes: { Partners: oidc() } } } as never }).errors, [])
    const refused = loadTestConfiguration({ settings: { ...ORIGIN, Authentication: { DefaultChallengeScheme: 'Partners', Schemes: { Partners: oidc({ Enabled: false }) } } } as never }).errors
    assert.deepEqual(refused.map((problem) => problem.key), ['ProjectTemplate:Authentication:DefaultChallengeScheme'])
  })
})
