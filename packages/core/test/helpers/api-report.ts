/**
 * The public API as the repository writes it down, for the tests that hold the two in step
 * (test/readme-api.test.ts, test/api-report.test.ts): the names an API report exports (the release
 * record's own reading, scripts/release-record.mjs) and the rows of README.md's "Public API" table.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CORE_ROOT } from './app.js'

/** The release record's functions (checked JavaScript without a declaration file: the generator's checkJs reads its JSDoc). */
export interface ReleaseRecordModule {
  exportedNames: (report: string) => string[]
  publicNameCount: (coreDir: string) => number
  readReleases: (coreDir: string) => Record<string, { readonly date: string, readonly digest: string, readonly publicNames?: number }>
}
const RELEASE_RECORD = '../../scripts/release-record.mjs'
export const releaseRecord = await import(RELEASE_RECORD) as ReleaseRecordModule

/** The names an API report of etc/ declares as exported, sorted. */
export function reportedNames (file = 'core.api.md'): string[] {
  return releaseRecord.exportedNames(readFileSync(join(CORE_ROOT, 'etc', file), 'utf8'))
}

/** The rows of the README's "Public API" table: area, status and the identifiers in its code spans. */
export function readmeRows (): Array<{ area: string, status: string, names: Set<string> }> {
  const readme = readFileSync(join(CORE_ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('\n## Public API\n'), readme.indexOf('\n### Testing an app'))
  return section.split('\n').filter((line) => /^\| [^-|][^|]* \| [a-z]+ \| /.test(line)).map((line) => {
    const [, area = '', status = '', exports = ''] = line.split(/(?<!\\)\|/).map((cell) => cell.trim())
    const spans = [...exports.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '')
    return { area, status, names: new Set(spans.flatMap((span) => span.match(/[A-Za-z_$][\w$]*/g) ?? [])) }
  })
}
