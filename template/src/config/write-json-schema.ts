/**
 * `npm run schema`: writes appsettings.schema.json from the TypeBox schema (the single source).
 * test/config/json-schema.test.ts fails when the committed file is stale.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONTENT_ROOT } from '../startup.js'
import { toJsonSchema } from './schema.js'

export const JSON_SCHEMA_FILE = 'appsettings.schema.json'

writeFileSync(join(CONTENT_ROOT, JSON_SCHEMA_FILE), `${JSON.stringify(toJsonSchema(), null, 2)}\n`)
