/** `npm run generate`: rewrites appsettings.schema.json and the key table of docs/configuration.md. */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONTENT_ROOT } from '../content-root.js'
import { CONFIGURATION_DOC, JSON_SCHEMA_FILE, renderJsonSchema, withKeyTable } from './reference.js'

writeFileSync(join(CONTENT_ROOT, JSON_SCHEMA_FILE), renderJsonSchema())
const doc = join(CONTENT_ROOT, CONFIGURATION_DOC)
writeFileSync(doc, withKeyTable(readFileSync(doc, 'utf8')))
