/**
 * Filter evaluation (src/directory/filter-evaluation.ts) at its edges, the semantics every core
 * store shares: case folding by attribute, any value of a multi-valued attribute, absent
 * attributes, date-times compared as instants, a group's members only when named.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { DirectoryGroup, DirectoryUser } from '../../src/directory/directory-store.js'
import { parseScimFilter } from '../../src/directory/filter-parser.js'
import { groupMatches, userMatches } from '../../src/directory/filter-evaluation.js'

const ada: DirectoryUser = {
  connection: 'c',
  id: 'ID-1',
  externalId: 'Ext',
  userName: 'Ada.Lovelace@Example.com',
  active: true,
  attributes: { emails: [{ value: 'ada@work.example', type: 'work', primary: true }, { value: 'ada@home.example', type: 'home' }], title: '', nickName: 'Straße' },
  created: '2026-01-01T00:00:00.000Z',
  lastModified: '2026-02-01T12:00:00.000Z',
  version: 3
}
const matches = (text: string): boolean => userMatches(ada, parseScimFilter('User', text))

test('case-insensitive attributes fold, case-exact ones do not', () => {
  assert.equal(matches('userName eq "ada.lovelace@example.COM"'), true)
  assert.equal(matches('id eq "id-1"'), false)
  assert.equal(matches('externalId eq "ext"'), false)
  assert.equal(matches('nickName eq "STRASSE"'), false, 'folding is lower-casing, not full case folding')
  assert.equal(matches('nickName eq "STRAßE"'), true)
})

test('a multi-valued attribute matches when any value does; ne when none equals', () => {
  assert.equal(matches('emails.type eq "home"'), true)
  assert.equal(matches('emails[type eq "home" and primary eq true]'), false, 'both on the same value')
  assert.equal(matches('emails[type eq "work" and primary eq true]'), true)
  assert.equal(matches('emails.type ne "home"'), false)
  assert.equal(matches('emails.type ne "other"'), true)
})

test('absent and empty values: only pr fails, ne and eq null match', () => {
  assert.equal(matches('title pr'), false, 'an empty string is not present')
  assert.equal(matches('title eq null'), true)
  assert.equal(matches('displayName ne "x"'), true)
  assert.equal(matches('displayName eq "x"'), false)
  assert.equal(matches('displayName gt "a"'), false)
  assert.equal(matches('name.givenName pr'), false)
})

test('date-times compare as instants, whatever their offset', () => {
  assert.equal(matches('meta.lastModified eq "2026-02-01T13:00:00+01:00"'), true)
  assert.equal(matches('meta.lastModified gt "2026-02-01T12:59:59+01:00"'), true)
  assert.equal(matches('meta.created lt "2026-01-01T00:00:00Z"'), false)
  assert.equal(matches('meta.version eq "W/\\"3\\""'), true)
})

test('a group\'s members are matched by id, and only those given', () => {
  const group: DirectoryGroup = { connection: 'c', id: 'g', displayName: 'Sales', attributes: {}, created: ada.created, lastModified: ada.lastModified, version: 1 }
  assert.equal(groupMatches(group, parseScimFilter('Group', 'members eq "u1"'), ['u0', 'u1']), true)
  assert.equal(groupMatches(group, parseScimFilter('Group', 'members[value eq "U1"]'), ['u1']), false)
  assert.equal(groupMatches(group, parseScimFilter('Group', 'members pr'), []), false)
  assert.equal(groupMatches(group, parseScimFilter('Group', 'displayName eq "SALES"')), true)
})
