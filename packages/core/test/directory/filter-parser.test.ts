/**
 * The SCIM filter and PATCH path parser (src/directory/filter-parser.ts): what RFC 7644 §3.4.2.2
 * allows parses to the exact tree a store receives (including the filters Entra ID and Okta
 * send); everything else, from the hostile corpus beside this test (corpora/invalid-filters.json,
 * one line per property it breaks) to filters over the length, depth and size caps, is refused as
 * `invalidFilter` with its reason, and never as a partial tree. Random input is either a filter or
 * a ScimFilterError, nothing else.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { ScimFilterError } from '../../src/directory/directory-errors.js'
import type { DirectoryResourceType } from '../../src/directory/attributes.js'
import { SCIM_FILTER_LIMITS, type ScimFilter } from '../../src/directory/filter.js'
import { parseScimFilter, parseScimPath } from '../../src/directory/filter-parser.js'

const corpus = JSON.parse(readFileSync(new URL('corpora/invalid-filters.json', import.meta.url), 'utf8')) as Array<{ breaks: string, resource: DirectoryResourceType, filter: string, reason: ScimFilterError['reason'] }>
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'

const refused = (reason: ScimFilterError['reason'], scimType = 'invalidFilter') => (error: unknown): boolean => {
  assert.ok(error instanceof ScimFilterError, `a ScimFilterError, got ${String(error)}`)
  assert.equal(error.reason, reason)
  assert.equal(error.scimType, scimType)
  assert.equal(error.status, 400)
  return true
}

const VALID: Array<[string, DirectoryResourceType, string, ScimFilter]> = [
  ['Okta\'s look-up before create', 'User', 'userName eq "ada@example.com"', { op: 'eq', attribute: 'userName', value: 'ada@example.com' }],
  ['Entra ID\'s look-up by externalId', 'User', 'externalId eq "5f7c2d8e-1b1a-4c52-9a1e-0d3c4f5a6b7c"', { op: 'eq', attribute: 'externalId', value: '5f7c2d8e-1b1a-4c52-9a1e-0d3c4f5a6b7c' }],
  ['Entra ID\'s group look-up', 'Group', 'displayName eq "Sales"', { op: 'eq', attribute: 'displayName', value: 'Sales' }],
  ['Entra ID\'s membership check', 'Group', 'id eq "g1" and members eq "u1"', { op: 'and', filters: [{ op: 'eq', attribute: 'id', value: 'g1' }, { op: 'eq', attribute: 'members.value', value: 'u1' }] }],
  ['incremental: active and lastModified', 'User', 'active eq true and meta.lastModified ge "2011-05-13T04:42:34Z"',
    { op: 'and', filters: [{ op: 'eq', attribute: 'active', value: true }, { op: 'ge', attribute: 'meta.lastModified', value: '2011-05-13T04:42:34.000Z' }] }],
  ['a date-time with an offset, as UTC', 'User', 'meta.created lt "2026-03-01T10:00:00.5+02:00"', { op: 'lt', attribute: 'meta.created', value: '2026-03-01T08:00:00.500Z' }],
  ['names, operators and literals in any case', 'User', 'USERNAME Eq "X" AnD Active EQ TRUE',
    { op: 'and', filters: [{ op: 'eq', attribute: 'userName', value: 'X' }, { op: 'eq', attribute: 'active', value: true }] }],
  ['and binds tighter than or', 'User', 'title pr or userName eq "a" and active eq false',
    { op: 'or', filters: [{ op: 'pr', attribute: 'title' }, { op: 'and', filters: [{ op: 'eq', attribute: 'userName', value: 'a' }, { op: 'eq', attribute: 'active', value: false }] }] }],
  ['parentheses and not', 'User', 'not (title pr or (nickName sw "x"))',
    { op: 'not', filter: { op: 'or', filters: [{ op: 'pr', attribute: 'title' }, { op: 'sw', attribute: 'nickName', value: 'x' }] } }],
  ['RFC 7644 value path example', 'User', 'emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]',
    {
      op: 'or',
      filters: [
        { op: 'valuePath', attribute: 'emails', filter: { op: 'and', filters: [{ op: 'eq', attribute: 'emails.type', value: 'work' }, { op: 'co', attribute: 'emails.value', value: '@example.com' }] } },
        { op: 'valuePath', attribute: 'ims', filter: { op: 'and', filters: [{ op: 'eq', attribute: 'ims.type', value: 'xmpp' }, { op: 'co', attribute: 'ims.value', value: '@foo.com' }] } }
      ]
    }],
  ['a complex attribute compares its value', 'User', 'emails co "example.com"', { op: 'co', attribute: 'emails.value', value: 'example.com' }],
  ['the core schema prefix', 'User', 'urn:ietf:params:scim:schemas:core:2.0:User:name.familyName co "O\'Malley"', { op: 'co', attribute: 'name.familyName', value: 'O\'Malley' }],
  ['the enterprise extension, any case', 'User', 'URN:IETF:PARAMS:SCIM:SCHEMAS:EXTENSION:ENTERPRISE:2.0:USER:Manager.Value eq "m1"', { op: 'eq', attribute: `${ENTERPRISE}:manager.value`, value: 'm1' }],
  ['JSON string escapes', 'User', 'userName eq "a\\"b\\\\c\\u00e9"', { op: 'eq', attribute: 'userName', value: 'a"b\\cé' }],
  ['null with eq and ne', 'User', 'title eq null or title ne NULL', { op: 'or', filters: [{ op: 'eq', attribute: 'title', value: null }, { op: 'ne', attribute: 'title', value: null }] }],
  ['spaces around brackets and parentheses', 'User', '  ( emails[ type eq "work" ] )  ', { op: 'valuePath', attribute: 'emails', filter: { op: 'eq', attribute: 'emails.type', value: 'work' } }],
  ['a keyword-like attribute prefix is an attribute', 'User', 'nickName eq "notable"', { op: 'eq', attribute: 'nickName', value: 'notable' }]
]

describe('SCIM filter parser', () => {
  for (const [name, resource, text, expected] of VALID) {
    test(`parses ${name}`, () => {
      const parsed = parseScimFilter(resource, text)
      assert.deepEqual(parsed, expected)
      assert.deepEqual(JSON.parse(JSON.stringify(parsed)), parsed, 'plain data')
    })
  }

  for (const entry of corpus) {
    test(`refuses ${entry.breaks}`, () => {
      assert.throws(() => parseScimFilter(entry.resource, entry.filter), refused(entry.reason))
    })
  }

  test(`refuses a filter over ${SCIM_FILTER_LIMITS.maxLength} characters before reading it`, () => {
    const padded = `userName eq "${'a'.repeat(SCIM_FILTER_LIMITS.maxLength)}"`
    assert.throws(() => parseScimFilter('User', padded), refused('too_long'))
    const fits = `userName eq "${'a'.repeat(SCIM_FILTER_LIMITS.maxLength - 14)}"`
    assert.equal(fits.length, SCIM_FILTER_LIMITS.maxLength)
    assert.equal((parseScimFilter('User', fits) as { value: string }).value.length, SCIM_FILTER_LIMITS.maxLength - 14)
  })

  test(`refuses nesting deeper than ${SCIM_FILTER_LIMITS.maxDepth}, however deep, without exhausting the stack`, () => {
    const nested = (depth: number): string => `${'('.repeat(depth)}title pr${')'.repeat(depth)}`
    assert.deepEqual(parseScimFilter('User', nested(SCIM_FILTER_LIMITS.maxDepth)), { op: 'pr', attribute: 'title' })
    assert.throws(() => parseScimFilter('User', nested(SCIM_FILTER_LIMITS.maxDepth + 1)), refused('too_deep'))
    assert.throws(() => parseScimFilter('User', `${'not ('.repeat(400)}title pr${')'.repeat(400)}`.slice(0, 1024)), refused('too_deep'))
  })

  test(`refuses more than ${SCIM_FILTER_LIMITS.maxTerms} comparisons`, () => {
    const terms = (count: number): string => Array.from({ length: count }, (_, index) => `userName eq "${index}"`).join(' or ')
    assert.equal((parseScimFilter('User', terms(SCIM_FILTER_LIMITS.maxTerms)) as { readonly filters: readonly unknown[] }).filters.length, SCIM_FILTER_LIMITS.maxTerms)
    assert.throws(() => parseScimFilter('User', terms(SCIM_FILTER_LIMITS.maxTerms + 1)), refused('too_complex'))
  })

  test('an error names the position and the attribute, never the compared value', () => {
    assert.throws(() => parseScimFilter('User', 'userName eq "x" and secretField eq "hunter2"'), (error: unknown) => {
      assert.ok(error instanceof ScimFilterError)
      assert.equal(error.position, 20)
      assert.equal(error.message, 'The filter is not valid at character 20: secretField is not a supported User attribute.')
      return true
    })
    assert.throws(() => parseScimFilter('User', 'active eq "hunter2"'), (error: unknown) => error instanceof ScimFilterError && !error.message.includes('hunter2'))
  })

  test('random input is a filter or a ScimFilterError, never another exception', () => {
    const alphabet = fc.constantFrom(...'userName eq "x" and or not ( ) [ ] emails.type pr gt 1 -2.5e3 true null urn:ietf:params:scim:schemas:core:2.0:User: \\ \t'.split(''))
    const words = fc.constantFrom('userName', ' eq ', ' and ', ' or ', 'not ', '(', ')', '[', ']', '"v"', 'emails', '.value', ' pr', ' gt ', '12', 'true', 'null', 'meta.lastModified', '"2026-01-01T00:00:00Z"', 'urn:ietf:params:scim:schemas:core:2.0:User:', ' ')
    const input = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: alphabet, maxLength: 80 }), fc.array(words, { maxLength: 30 }).map((parts) => parts.join('')))
    fc.assert(fc.property(input, fc.constantFrom<DirectoryResourceType>('User', 'Group'), (text, resource) => {
      try {
        const parsed = parseScimFilter(resource, text)
        assert.equal(typeof parsed.op, 'string')
      } catch (error) {
        if (!(error instanceof ScimFilterError)) throw error
      }
    }), { numRuns: Number(process.env.FUZZ_RUNS ?? 2000) })
  })
})

describe('SCIM PATCH path parser', () => {
  test('parses an attribute, a sub-attribute, a filtered path and Entra ID\'s filtered replace path', () => {
    assert.deepEqual(parseScimPath('User', 'active'), { attribute: 'active' })
    assert.deepEqual(parseScimPath('User', 'Name.GivenName'), { attribute: 'name.givenName' })
    assert.deepEqual(parseScimPath('User', `${ENTERPRISE}:manager`), { attribute: `${ENTERPRISE}:manager` })
    assert.deepEqual(parseScimPath('Group', 'members[value eq "u1"]'), { attribute: 'members', filter: { op: 'eq', attribute: 'members.value', value: 'u1' } })
    assert.deepEqual(parseScimPath('User', 'emails[type eq "work"].value'), { attribute: 'emails', filter: { op: 'eq', attribute: 'emails.type', value: 'work' }, subAttribute: 'emails.value' })
    assert.deepEqual(parseScimPath('User', 'addresses[type eq "work"].streetAddress'),
      { attribute: 'addresses', filter: { op: 'eq', attribute: 'addresses.type', value: 'work' }, subAttribute: 'addresses.streetAddress' })
  })

  const INVALID: Array<[string, string, ScimFilterError['reason']]> = [
    ['an unknown attribute', 'password', 'unknown_attribute'],
    ['schemas', 'schemas', 'unknown_attribute'],
    ['a filter on a simple attribute', 'userName[value eq "x"]', 'type_mismatch'],
    ['an unknown sub-attribute after a filter', 'emails[type eq "work"].secret', 'unknown_attribute'],
    ['a space before the sub-attribute', 'emails[type eq "work"] .value', 'syntax'],
    ['two sub-attributes after a filter', 'emails[type eq "work"].value.x', 'syntax'],
    ['an unbalanced bracket', 'emails[type eq "work"', 'syntax'],
    ['text after the path', 'active x', 'syntax'],
    ['an empty path', '', 'syntax']
  ]
  for (const [name, path, reason] of INVALID) {
    test(`refuses ${name} as invalidPath`, () => {
      assert.throws(() => parseScimPath('User', path), refused(reason, 'invalidPath'))
    })
  }
})
