/**
 * Runtime provider definitions (issue 28): validated with the schema and rules of a named scheme,
 * problems naming `<Root>:Authentication:Schemes:<Name>:<Key>`, a secret never in a message.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { validateRuntimeProvider } from '../../src/providers/runtime-definitions.js'
import { loadTestConfiguration } from '../helpers/app.js'

const SECRET = 'runtime-definition-PLANTED-SECRET-93'
const { config } = loadTestConfiguration()
const context = { config, environmentName: 'Production', rootKey: 'Acme' }

describe('validateRuntimeProvider', () => {
  test('a valid OpenID Connect definition becomes an instance with its verified domains and tenant', () => {
    const result = validateRuntimeProvider({
      scheme: 'Contoso',
      settings: { Type: 'OpenIdConnect', Authority: 'https://login.contoso.example', ClientId: 'app', ClientSecret: SECRET },
      domains: [{ name: 'Contoso.example', verified: true }, { name: 'contoso.test', verified: false }],
      tenant: 'tenant-contoso'
    }, context)
    assert.equal(result.ok, true)
    if (!result.ok) return
    assert.equal(result.provider.instance.protocol, 'OpenIdConnect')
    assert.equal(result.provider.instance.keyPrefix, 'Acme:Authentication:Schemes:Contoso')
    assert.deepEqual(result.provider.verifiedDomains, ['contoso.example'])
    assert.deepEqual(result.provider.instance.settings.Domains, ['contoso.example'])
    assert.equal(result.provider.instance.settings.CallbackPath, '/signin-contoso')
    assert.equal(result.provider.tenant, 'tenant-contoso')
  })

  describe('what only the definition may say (issue 40, items 18 and 19)', () => {
    const X_TID = '72f988bf-86f1-41af-91ab-2d7cd011db47'
    const OTHER_TID = '0b6a0f2e-3c1d-4b8e-9d7a-5e4f3c2b1a09'
    const customerX = (settings: Record<string, unknown>, tenant: string | null = 't-x') => validateRuntimeProvider({
      scheme: 'CustomerX',
      settings: { Type: 'OpenIdConnect', Authority: 'https://login.microsoftonline.com/organizations/v2.0', ClientId: 'app', ClientSecret: SECRET, ...settings },
      ...(tenant === null ? {} : { tenant })
    }, context)
    const P = 'Acme:Authentication:Schemes:CustomerX'

    test('an AllowedTenants entry mapped to another application tenant than the definition\'s is refused, naming the entry', () => {
      const result = customerX({ AllowedTenants: [X_TID, `${OTHER_TID}=t-y`] })
      assert.equal(result.ok, false)
      if (result.ok) return
      assert.deepEqual(result.problems, [{ key: `${P}:AllowedTenants:1`, message: `${P}:AllowedTenants:1 maps its tenant id to another application tenant than the definition's tenant; for a provider from the provider source only the definition's tenant speaks for its users (list the tenant id alone).` }])
      assert.ok(!JSON.stringify(result).includes('t-y'))
    })

    test('a mapping without a tenant in the definition is refused too; one to the definition\'s own tenant, or none, is accepted', () => {
      assert.equal(customerX({ AllowedTenants: [`${X_TID}=t-x`] }, null).ok, false)
      assert.equal(customerX({ AllowedTenants: [`${X_TID}=t-x`, OTHER_TID] }).ok, true)
    })

    test('ClientAssertionAudience Endpoint is refused (a configured provider\'s opt-in only); Issuer is accepted', () => {
      const refused = customerX({ AllowedTenants: [X_TID], ClientAssertionAudience: 'Endpoint' })
      assert.equal(refused.ok, false)
      if (!refused.ok) assert.deepEqual(refused.problems.map((problem) => problem.key), [`${P}:ClientAssertionAudience`])
      assert.equal(customerX({ AllowedTenants: [X_TID], ClientAssertionAudience: 'Issuer' }).ok, true)
    })

    test('an AllowedTenants entry that is a domain name or an upper-case tenant id is refused, naming its index', () => {
      const result = customerX({ AllowedTenants: ['contoso.onmicrosoft.com', X_TID.toUpperCase()] })
      assert.equal(result.ok, false)
      if (!result.ok) assert.deepEqual(result.problems.map((problem) => problem.key), [`${P}:AllowedTenants:0`, `${P}:AllowedTenants:1`])
    })
  })

  test('an invalid definition lists each problem by key, never the secret', () => {
    const result = validateRuntimeProvider({
      scheme: 'Fabrikam',
      settings: { Type: 'OpenIdConnect', Authority: 'http://login.fabrikam.example', ClientSecret: SECRET, CallbackPath: '/x', Colour: 'blue', ClockSkewSeconds: 'soon' },
      domains: [{ name: 'not a domain', verified: true }]
    }, context)
    assert.equal(result.ok, false)
    if (result.ok) return
    assert.deepEqual(result.problems.map((problem) => problem.key).sort(), [
      'Acme:Authentication:Schemes:Fabrikam:CallbackPath',
      'Acme:Authentication:Schemes:Fabrikam:ClockSkewSeconds',
      'Acme:Authentication:Schemes:Fabrikam:Colour'
    ])
    assert.ok(!JSON.stringify(result).includes(SECRET))
    assert.ok(!JSON.stringify(result).includes('ProjectTemplate'))
  })

  test('rule problems (missing keys, http authority, bad domain) name their keys', () => {
    const result = validateRuntimeProvider({
      scheme: 'Fabrikam',
      settings: { Type: 'OpenIdConnect', Authority: 'http://login.fabrikam.example', ClientSecret: SECRET },
      domains: [{ name: 'not a domain', verified: false }]
    }, context)
    assert.equal(result.ok, false)
    if (result.ok) return
    const keys = result.problems.map((problem) => problem.key)
    assert.ok(keys.includes('Acme:Authentication:Schemes:Fabrikam:ClientId'), keys.join())
    assert.ok(keys.includes('Acme:Authentication:Schemes:Fabrikam:Authority'), keys.join())
    assert.ok(keys.includes('Acme:Authentication:Schemes:Fabrikam:Domains:0'), keys.join())
    assert.ok(!JSON.stringify(result).includes(SECRET))
  })

  test('a bad name, a missing Type and a rule of the protocol are refused', () => {
    const bad = validateRuntimeProvider({ scheme: 'Cookies', settings: { Type: 'OpenIdConnect' } }, context)
    assert.equal(bad.ok, false)
    if (!bad.ok) assert.equal(bad.problems[0]?.key, 'Acme:Authentication:Schemes:Cookies')
    const untyped = validateRuntimeProvider({ scheme: 'Ok', settings: {} }, context)
    if (!untyped.ok) assert.deepEqual(untyped.problems, [{ key: 'Acme:Authentication:Schemes:Ok:Type', message: 'Acme:Authentication:Schemes:Ok:Type is required: OpenIdConnect or Saml2.' }])
    assert.equal(untyped.ok, false)
    const logout = validateRuntimeProvider({ scheme: 'Ok', settings: { Type: 'Saml2', EntityId: 'https://sp.example', MetadataUrl: 'https://idp.example/metadata', SignOutAtProvider: true } }, context)
    assert.equal(logout.ok, false)
    // The rule of configuration: Single Logout needs the SP's signing key.
    if (!logout.ok) assert.deepEqual(logout.problems.map((problem) => problem.key), ['Acme:Authentication:Schemes:Ok:SigningKey'])
  })
})

describe('validateRuntimeProvider: internal targets outside Development (issue 33, item 2)', () => {
  const oidc = (authority: string): Parameters<typeof validateRuntimeProvider>[0] => ({ scheme: 'Contoso', settings: { Type: 'OpenIdConnect', Authority: authority, ClientId: 'app', ClientSecret: SECRET } })
  const problemsOf = (result: ReturnType<typeof validateRuntimeProvider>): string[] => result.ok ? [] : result.problems.map((problem) => `${problem.key} ${problem.message}`)

  for (const authority of ['https://169.254.169.254/', 'https://0x7f000001/', 'https://[fd00::1]/', 'https://localhost/', 'https://user:pass@login.contoso.example/']) {
    test(`Authority ${authority} is refused, naming the key, never the value`, () => {
      const problems = problemsOf(validateRuntimeProvider(oidc(authority), context))
      assert.equal(problems.length, 1, problems.join('\n'))
      assert.match(problems[0]!, /^Acme:Authentication:Schemes:Contoso:Authority Acme:Authentication:Schemes:Contoso:Authority must not /)
      assert.match(problems[0]!, /Acme:Authentication:ProviderSource:AllowedInternalHosts/)
      assert.ok(!problems[0]!.includes('pass@'))
    })
  }

  test('a SAML2 MetadataUrl on a private address is refused the same way', () => {
    const problems = problemsOf(validateRuntimeProvider({ scheme: 'Fabrikam', settings: { Type: 'Saml2', EntityId: 'https://app.example/sp', MetadataUrl: 'https://10.0.0.8/metadata' } }, context))
    assert.deepEqual(problems.map((problem) => problem.split(' ', 1)[0]), ['Acme:Authentication:Schemes:Fabrikam:MetadataUrl'])
  })

  test('in Development, and for a host or network the operator allows, the definition is valid', () => {
    assert.equal(validateRuntimeProvider(oidc('http://127.0.0.1:8080/'), { ...context, environmentName: 'Development' }).ok, true)
    const allowing = loadTestConfiguration({ settings: { Authentication: { ProviderSource: { AllowedInternalHosts: ['10.0.0.0/8', 'localhost'] } } } }).config
    assert.equal(validateRuntimeProvider(oidc('https://10.1.2.3/'), { ...context, config: allowing }).ok, true)
    assert.equal(validateRuntimeProvider(oidc('https://localhost/'), { ...context, config: allowing }).ok, true)
    assert.equal(validateRuntimeProvider(oidc('https://192.168.0.1/'), { ...context, config: allowing }).ok, false)
  })

  test('an allow-list entry that is neither a host name nor a network fails startup, naming its key', () => {
    const loaded = loadTestConfiguration({ settings: { Authentication: { ProviderSource: { AllowedInternalHosts: ['10.0.0.0/8', 'https://idp.example'] } } } })
    assert.deepEqual(loaded.errors.map((error) => error.key), ['ProjectTemplate:Authentication:ProviderSource:AllowedInternalHosts:1'])
  })
})

describe('ClaimMappings may not target the tenant claim (issue 33, item 6)', () => {
  for (const target of ['application:tenant', 'Tenant']) {
    test(`a runtime definition mapping a claim to ${target} is refused, naming ClaimMappings`, () => {
      const result = validateRuntimeProvider({ scheme: 'Contoso', settings: { Type: 'OpenIdConnect', Authority: 'https://login.contoso.example', ClientId: 'app', ClientSecret: SECRET, ClaimMappings: { org: target } } }, context)
      assert.equal(result.ok, false)
      if (!result.ok) assert.deepEqual(result.problems.map((problem) => problem.key), ['Acme:Authentication:Schemes:Contoso:ClaimMappings'])
    })
  }
  test('a configured scheme mapping a claim to application:tenant fails startup, naming the key; other targets pass', () => {
    const loaded = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Schemes: { Partners: { Type: 'OpenIdConnect', Authority: 'https://idp.example.test', ClientId: 'app', ClientSecret: SECRET, ClaimMappings: { org: 'application:tenant', roles: 'role' } } } } } })
    assert.deepEqual(loaded.errors.map((error) => error.key), ['ProjectTemplate:Authentication:Schemes:Partners:ClaimMappings'])
    const fine = loadTestConfiguration({ settings: { Hosting: { PublicOrigin: 'https://app.example.test' }, Authentication: { Schemes: { Partners: { Type: 'OpenIdConnect', Authority: 'https://idp.example.test', ClientId: 'app', ClientSecret: SECRET, ClaimMappings: { roles: 'role' } } } } } })
    assert.deepEqual(fine.errors, [])
  })
})
