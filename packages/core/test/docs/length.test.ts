/**
 * No reference document grows into one file a reader cannot find their way through (issue 43,
 * item 5): every Markdown file under docs/ is at most 700 lines. A document that outgrows it
 * becomes an index with a page per part, as providers.md (docs/providers/) and security.md
 * (docs/security/) did.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { CORE_ROOT } from '../helpers/app.js'

const DOCS = join(CORE_ROOT, 'docs')
/** Longest document, in lines. */
const MAX_LINES = 700

/** Every Markdown file under `directory`, at any depth. */
function markdownFiles (directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => join(entry.parentPath, entry.name))
}

test(`every document under docs/ is at most ${MAX_LINES} lines`, () => {
  const files = markdownFiles(DOCS)
  assert.ok(files.some((file) => file.endsWith(join('docs', 'security', 'verification.md'))), 'the pages under docs/security/ are read')
  const tooLong = files
    .map((file) => ({ file: relative(CORE_ROOT, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ file, lines }) => `${file}: ${lines} lines`)
  assert.deepEqual(tooLong, [])
})
