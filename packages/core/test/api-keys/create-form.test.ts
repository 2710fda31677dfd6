/**
 * The creation form as the service's request (api-keys/create-form.ts): checkboxes to a list,
 * the lifetime to a number, empty fields to the scheme's defaults, the page's own fields dropped,
 * and every other field passed on unchanged, so the service refuses a body naming an owner.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequestOf, formValuesOf } from '../../src/api-keys/create-form.js'

const cases: Array<{ name: string, body: unknown, expected: Record<string, unknown> }> = [
  { name: 'one checkbox, a lifetime, the page\'s fields', body: { __RequestVerificationToken: 't', scheme: 'Keys', name: 'n', scopes: 'a', lifetimeDays: '30', owner: 'user' }, expected: { name: 'n', scopes: ['a'], lifetimeDays: 30, owner: 'user' } },
  { name: 'two checkboxes, empty lifetime and owner (the defaults)', body: { name: 'n', scopes: ['a', 'b'], lifetimeDays: '', owner: '' }, expected: { name: 'n', scopes: ['a', 'b'] } },
  { name: 'no checkbox', body: { name: 'n' }, expected: { name: 'n', scopes: [] } },
  { name: 'a lifetime that is no whole number stays a string (refused by the service)', body: { name: 'n', scopes: 'a', lifetimeDays: '2.5' }, expected: { name: 'n', scopes: ['a'], lifetimeDays: '2.5' } },
  { name: 'a field naming an owner is passed on (refused by the service)', body: { name: 'n', scopes: 'a', userId: 'someone' }, expected: { name: 'n', scopes: ['a'], userId: 'someone' } },
  { name: 'no body', body: undefined, expected: { scopes: [] } }
]
for (const entry of cases) {
  test(`createRequestOf: ${entry.name}`, () => {
    assert.deepEqual(createRequestOf(entry.body), entry.expected)
  })
}

test('formValuesOf keeps what the form shows again, as strings, bounded', () => {
  assert.deepEqual(formValuesOf({ name: 'x'.repeat(300), scopes: ['a', 7], lifetimeDays: '9', owner: 'tenant', __RequestVerificationToken: 't' }), { name: 'x'.repeat(200), scopes: ['a'], lifetimeDays: '9', owner: 'tenant' })
  assert.deepEqual(formValuesOf('text'), { name: '', scopes: [], lifetimeDays: '', owner: '' })
})
