import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONFIGURATION_DOC, JSON_SCHEMA_FILE, renderJsonSchema, withKeyTable } from '@project-template/core'
import { APPLICATION_NAME } from '../../src/application-name.js'
import { APP_ROOT } from '../helpers/app.js'

test('appsettings.schema.json is the current rendering of the schema (run npm run generate)', () => {
  assert.equal(readFileSync(join(APP_ROOT, JSON_SCHEMA_FILE), 'utf8'), renderJsonSchema(APPLICATION_NAME))
})

test('the key table of docs/configuration.md is current (run npm run generate)', () => {
  const document = readFileSync(join(APP_ROOT, CONFIGURATION_DOC), 'utf8')
  assert.equal(document, withKeyTable(document, APPLICATION_NAME))
})

test('appsettings.json references the JSON schema for editors', () => {
  const settings = JSON.parse(readFileSync(join(APP_ROOT, 'appsettings.json'), 'utf8')) as { $schema?: string }
  assert.equal(settings.$schema, `./${JSON_SCHEMA_FILE}`)
})
