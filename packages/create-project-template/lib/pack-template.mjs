// @ts-check
/**
 * `npm pack`/`npm publish` lifecycle: a published package carries the template in
 * `<package>/template` (listed in `files`), since the monorepo's `template/` is not there.
 * `node lib/pack-template.mjs copy` (prepack) copies exactly the files the generator would read;
 * `node lib/pack-template.mjs remove` (postpack) deletes the copy, so that a checkout keeps using
 * the live `template/`.
 */
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readTemplateFiles } from './template-files.mjs'

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const COPY = join(PACKAGE_DIR, 'template')
const SOURCE = resolve(PACKAGE_DIR, '..', '..', 'template')

const command = process.argv[2]
if (command === 'copy') {
  if (!existsSync(join(SOURCE, 'package.json'))) throw new Error(`No template at ${SOURCE}.`)
  rmSync(COPY, { recursive: true, force: true })
  for (const file of readTemplateFiles(SOURCE)) {
    const path = join(COPY, ...file.path.split('/'))
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, file.data)
    chmodSync(path, file.mode)
  }
} else if (command === 'remove') {
  rmSync(COPY, { recursive: true, force: true })
} else {
  process.stderr.write('usage: node lib/pack-template.mjs copy|remove\n')
  process.exitCode = 2
}
