/**
 * Where the app root is: `src/..` when run with tsx, `dist/..` when built (this module sits, or is
 * bundled, one level below the root). Entry points only; buildApp receives it as `contentRoot`.
 */
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const CONTENT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
