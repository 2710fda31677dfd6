/**
 * The query plan (src/directory/query-plan.ts): the common filters of issue 41 are answered from
 * an index (and exactly, when the index is the whole filter), the rest from a scan confirmed by
 * evaluation. The SQL stores' use of the indexes is checked with EXPLAIN in
 * postgres-directory-store.test.ts; this pins which filters are indexable at all.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { DirectoryResourceType } from '../../src/directory/attributes.js'
import { parseScimFilter } from '../../src/directory/filter-parser.js'
import { planQuery, type QueryPlan } from '../../src/directory/query-plan.js'

const plan = (resource: DirectoryResourceType, text: string): QueryPlan => planQuery(resource, parseScimFilter(resource, text))
const MS = Date.parse('2026-01-01T00:00:00Z')

test('no filter: every resource, counted by the index', () => {
  assert.deepEqual(planQuery('User', undefined), { path: { kind: 'all' }, exact: true, needsMembers: false })
})

test('eq on id, userName (folded), externalId and a group\'s displayName (folded) is a key look-up, exact alone', () => {
  assert.deepEqual(plan('User', 'id eq "U-1"'), { path: { kind: 'keys', key: 'id', values: ['U-1'] }, exact: true, needsMembers: false })
  assert.deepEqual(plan('User', 'userName eq "Ada@Example.COM"').path, { kind: 'keys', key: 'userName', values: ['ada@example.com'] })
  assert.deepEqual(plan('User', 'externalId eq "E-1"').path, { kind: 'keys', key: 'externalId', values: ['E-1'] })
  assert.deepEqual(plan('Group', 'displayName eq "Sales"').path, { kind: 'keys', key: 'displayName', values: ['sales'] })
  assert.deepEqual(plan('User', 'userName eq "a" or userName eq "A" or userName eq "b"'), { path: { kind: 'keys', key: 'userName', values: ['a', 'b'] }, exact: true, needsMembers: false })
})

test('a key look-up with more conditions is still a key look-up, confirmed by evaluation', () => {
  assert.deepEqual(plan('User', 'active eq true and userName eq "a"'), { path: { kind: 'keys', key: 'userName', values: ['a'] }, exact: false, needsMembers: false })
  assert.deepEqual(plan('Group', 'id eq "g" and members eq "u"'), { path: { kind: 'keys', key: 'id', values: ['g'] }, exact: false, needsMembers: true })
})

test('active and lastModified bounds read the (active, lastModified) index, exact when nothing else is asked', () => {
  assert.deepEqual(plan('User', 'active eq true and meta.lastModified ge "2026-01-01T00:00:00Z"'),
    { path: { kind: 'modified', active: true, from: { ms: MS, inclusive: true } }, exact: true, needsMembers: false })
  assert.deepEqual(plan('User', 'meta.lastModified gt "2026-01-01T00:00:00Z" and meta.lastModified ge "2025-01-01T00:00:00Z" and meta.lastModified lt "2026-01-01T00:00:00Z"').path,
    { kind: 'modified', from: { ms: MS, inclusive: false }, to: { ms: MS, inclusive: false } })
  assert.deepEqual(plan('User', 'active eq false and title pr'), { path: { kind: 'modified', active: false }, exact: false, needsMembers: false })
})

test('what no index serves is a scan: or across attributes, not, substrings, other attributes', () => {
  for (const text of ['userName eq "a" or externalId eq "b"', 'not (userName eq "a")', 'userName sw "a"', 'emails[type eq "work"]', 'userName ne "a"']) {
    assert.deepEqual(plan('User', text).path, { kind: 'scan' }, text)
    assert.equal(plan('User', text).exact, false, text)
  }
})
